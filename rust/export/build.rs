//! Compiles the trimmed Perfetto protos with prost + protox (pure Rust, no system protoc).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "protos/perfetto_trace.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["protos"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}

//! Nanoscope's text format: `<ns>:<method>` per entry, `<ns>:POP` per exit, oldest first.
//! Timestamps are wall-clock nanoseconds; the format has no thread field, so it takes one input.

use std::io::Write;

use crate::{ExportError, Result};
use hubble_format::names;
use hubble_format::stream::Input;
use hubble_format::stream::{prepare, Merged, Step};

/// Writes one input as Nanoscope text.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    if inputs.len() != 1 {
        return Err(ExportError::Unsupported(format!(
            "Nanoscope text holds one thread; got {} inputs",
            inputs.len()
        )));
    }
    write_threads(inputs, &[0], sink)
}

/// Writes the inputs of one thread (the runs of a version 4 file's thread, in time order) as
/// Nanoscope text; `threads[i]` is input `i`'s thread and must be the same for all.
pub fn write_threads(inputs: &[Input<'_>], threads: &[usize], sink: &mut dyn Write) -> Result<()> {
    crate::check_threads(inputs, threads)?;
    if threads.iter().any(|t| *t != threads[0]) {
        return Err(ExportError::Unsupported(
            "Nanoscope text holds one thread; got several".into(),
        ));
    }
    let prepared = prepare(inputs)?;
    for (i, ns, step) in Merged::new(&prepared) {
        match step {
            Step::Enter(method) => writeln!(
                sink,
                "{ns}:{}",
                names::display(&inputs[i].file.symbols, method)
            )?,
            Step::Exit => writeln!(sink, "{ns}:POP")?,
        }
    }
    sink.flush()?;
    Ok(())
}

//! Nanoscope's text format: `<ns>:<method>` per entry, `<ns>:POP` per exit, oldest first.
//! Timestamps are wall-clock nanoseconds; the format has no thread field, so it takes one input.

use std::io::Write;

use crate::names;
use crate::stream::{prepare, Merged, Step};
use crate::{ExportError, Input, Result};

/// Writes one input as Nanoscope text.
pub fn write(inputs: &[Input<'_>], sink: &mut dyn Write) -> Result<()> {
    if inputs.len() != 1 {
        return Err(ExportError::Unsupported(format!(
            "Nanoscope text holds one thread; got {} inputs",
            inputs.len()
        )));
    }
    let prepared = prepare(inputs)?;
    let symbols = &inputs[0].file.symbols;
    for (_, ns, step) in Merged::new(&prepared) {
        match step {
            Step::Enter(method) => writeln!(sink, "{ns}:{}", names::display(symbols, method))?,
            Step::Exit => writeln!(sink, "{ns}:POP")?,
        }
    }
    sink.flush()?;
    Ok(())
}

//! Where diagnostics go ([`Diagnostics`]: stderr in the binary): the table's `~` lines,
//! the script formats' error lines and the informer's own lines; never data.

use std::io::{self, Write};

use crate::text::sanitize;

/// The writer of a printer's diagnostics.
pub type Diagnostics = Box<dyn Write + Send>;

/// Writes one line of diagnostics, its control characters escaped.
pub fn say(diag: &mut Diagnostics, line: &str) -> io::Result<()> {
    writeln!(diag, "{}", sanitize(line))
}

//! The one JSON-lines reader of the operator feeds (listings, auction lots): the non-blank lines
//! of a file, a byte-order mark dropped from the first, each parsed by the feed's own function
//! into a row or a rejection at its physical line.

use super::value::decode;
use super::{Parsed, Rejection};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// A feed's parser of one line: the row, or why the line is rejected.
pub(crate) type ParseLine<T> = fn(&str) -> Result<T, String>;

/// The non-blank lines of a JSON-lines file, each parsed into a row or a rejection.
pub(crate) struct JsonLines<T> {
    file: String,
    reader: BufReader<File>,
    /// Physical lines consumed so far.
    line: u64,
    buf: Vec<u8>,
    finished: bool,
    parse: ParseLine<T>,
}

impl<T> JsonLines<T> {
    pub(crate) fn open(path: &Path, parse: ParseLine<T>) -> io::Result<JsonLines<T>> {
        Ok(JsonLines {
            file: path.display().to_string(),
            reader: BufReader::new(File::open(path)?),
            line: 0,
            buf: Vec::new(),
            finished: false,
            parse,
        })
    }

    fn reject(&self, line: u64, reason: String) -> Rejection {
        Rejection {
            file: self.file.clone(),
            line,
            reason,
        }
    }
}

impl<T> Iterator for JsonLines<T> {
    type Item = Parsed<T>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.finished {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.finished = true,
                Ok(_) => {
                    self.line += 1;
                    let mut bytes = self.buf.as_slice();
                    if self.line == 1 {
                        bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
                    }
                    let text = decode(bytes);
                    if text.trim().is_empty() {
                        continue;
                    }
                    let line = self.line;
                    return Some(
                        (self.parse)(&text)
                            .map(|row| (line, row))
                            .map_err(|reason| self.reject(line, reason)),
                    );
                }
                Err(e) => {
                    // an I/O error mid-file: nothing after it can be trusted, so stop here
                    self.finished = true;
                    return Some(Err(self.reject(self.line + 1, format!("unreadable: {e}"))));
                }
            }
        }
        None
    }
}

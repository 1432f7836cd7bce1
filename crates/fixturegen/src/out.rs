//! Line-oriented file writing with exact control over quoting and line endings, counting lines
//! so malformed rows can be reported by their 1-based line number.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    CrLf,
}

impl Eol {
    fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }
}

pub struct LineFile {
    pub rel: String,
    w: BufWriter<File>,
    eol: Eol,
    /// Lines written so far (the header included).
    pub lines: u64,
    /// Data rows written so far (the header excluded).
    pub rows: u64,
    pub bytes: u64,
    line: String,
}

/// The finished file's numbers, for the manifest.
#[derive(Debug, Clone)]
pub struct FileStat {
    pub rel: String,
    pub rows: u64,
    pub bytes: u64,
}

impl LineFile {
    pub fn create(out_dir: &Path, rel: &str, eol: Eol) -> io::Result<LineFile> {
        let path: PathBuf = out_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Ok(LineFile {
            rel: rel.to_string(),
            w: BufWriter::with_capacity(1 << 16, File::create(path)?),
            eol,
            lines: 0,
            rows: 0,
            bytes: 0,
            line: String::with_capacity(2048),
        })
    }

    fn emit(&mut self, text: &str, is_row: bool) -> io::Result<()> {
        self.w.write_all(text.as_bytes())?;
        self.w.write_all(self.eol.as_str().as_bytes())?;
        self.bytes += (text.len() + self.eol.as_str().len()) as u64;
        self.lines += 1;
        if is_row {
            self.rows += 1;
        }
        Ok(())
    }

    pub fn header(&mut self, text: &str) -> io::Result<()> {
        self.emit(text, false)
    }

    /// Writes text with no line ending (the report-builder header defect).
    pub fn header_without_eol(&mut self, text: &str) -> io::Result<()> {
        self.w.write_all(text.as_bytes())?;
        self.bytes += text.len() as u64;
        Ok(())
    }

    pub fn raw_row(&mut self, text: &str) -> io::Result<()> {
        self.emit(text, true)
    }

    /// Fields quoted only where needed (comma, quote or line break), as the EPC bulk files are.
    pub fn row_minimal<S: AsRef<str>>(&mut self, fields: &[S]) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_minimal(&mut line, f.as_ref());
        }
        let r = self.emit(&line, true);
        self.line = line;
        r
    }

    /// Every field quoted, as Price Paid is.
    pub fn row_quoted<S: AsRef<str>>(&mut self, fields: &[S]) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_quoted(&mut line, f.as_ref());
        }
        let r = self.emit(&line, true);
        self.line = line;
        r
    }

    pub fn finish(mut self) -> io::Result<FileStat> {
        self.w.flush()?;
        Ok(FileStat {
            rel: self.rel,
            rows: self.rows,
            bytes: self.bytes,
        })
    }
}

pub fn push_minimal(line: &mut String, f: &str) {
    if f.contains([',', '"', '\n', '\r']) {
        push_quoted(line, f);
    } else {
        line.push_str(f);
    }
}

pub fn push_quoted(line: &mut String, f: &str) {
    line.push('"');
    for c in f.chars() {
        if c == '"' {
            line.push('"');
        }
        line.push(c);
    }
    line.push('"');
}

/// Writes a small whole file (GeoJSON, the manifest) and returns its size.
pub fn write_whole(out_dir: &Path, rel: &str, text: &str) -> io::Result<u64> {
    let path = out_dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    Ok(text.len() as u64)
}

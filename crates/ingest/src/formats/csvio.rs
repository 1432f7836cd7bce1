//! The CSV plumbing every CSV dataset shares: opening with a peek at the first line,
//! a record iterator with physical line numbers, and header lookup by name.

use super::value::decode;
use super::{Parsed, Rejection};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

/// How much of the first line `open` peeks at; longer lines are still read whole by the CSV parser.
const PEEK_LIMIT: u64 = 1 << 20;

/// A file opened for parsing, with its first line (or its first `PEEK_LIMIT` bytes) read ahead.
pub(crate) struct Opened {
    pub file: String,
    /// The raw first line including its terminator, without a UTF-8 byte-order mark.
    pub first: Vec<u8>,
    pub rest: BufReader<File>,
}

impl Opened {
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut rest = BufReader::new(File::open(path)?);
        let mut first = Vec::new();
        (&mut rest).take(PEEK_LIMIT).read_until(b'\n', &mut first)?;
        if first.starts_with(b"\xEF\xBB\xBF") {
            first.drain(..3);
        }
        Ok(Self {
            file: path.display().to_string(),
            first,
            rest,
        })
    }

    /// The first line without its terminator.
    pub fn first_line(&self) -> &[u8] {
        let mut l = self.first.as_slice();
        while let [head @ .., b'\n' | b'\r'] = l {
            l = head;
        }
        l
    }

    /// A CSV source over the whole file, first line included.
    pub fn into_source(self) -> CsvSource {
        let reader: Box<dyn BufRead + Send> = Box::new(Cursor::new(self.first).chain(self.rest));
        CsvSource::new(self.file, reader)
    }

    /// A CSV source that starts `skip` bytes into the first line (line numbering starts at 1).
    pub fn into_source_from(self, skip: usize) -> CsvSource {
        let tail = self.first.get(skip..).unwrap_or_default().to_vec();
        let reader: Box<dyn BufRead + Send> = Box::new(Cursor::new(tail).chain(self.rest));
        CsvSource::new(self.file, reader)
    }
}

/// CSV records as `(line, fields)`, where `line` is the 1-based physical line the record starts on.
///
/// The dialect is the one the open-data publishers write (RFC 4180): `,` separates fields, `"`
/// quotes a field (`""` inside quotes is one quote), quoted fields may span lines, records end at
/// LF or CRLF, and blank lines are skipped. A quote inside an unquoted field is an ordinary
/// character, as are characters after a closing quote. The parser is hand-written rather than the
/// `csv` crate's because that reports a record's position as the end of the previous record,
/// which is not the record's own line after CRLF or blank lines.
/// A read error ends the stream after one rejection.
pub(crate) struct CsvSource {
    pub file: String,
    reader: Box<dyn BufRead + Send>,
    /// Physical lines consumed so far.
    line: u64,
    buf: Vec<u8>,
    finished: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldState {
    Start,
    Unquoted,
    Quoted,
    /// Just after a quote inside a quoted field: a closing quote, or the first of `""`.
    QuoteInQuoted,
}

impl CsvSource {
    fn new(file: String, reader: Box<dyn BufRead + Send>) -> Self {
        Self {
            file,
            reader,
            line: 0,
            buf: Vec::new(),
            finished: false,
        }
    }

    /// Reads the first record as a header of normalised names (`None` for an empty file).
    pub fn header(&mut self) -> Result<Option<Vec<String>>, io::Error> {
        match self.next() {
            None => Ok(None),
            Some(Ok((_, fields))) => Ok(Some(fields.iter().map(|f| normalise_name(f)).collect())),
            Some(Err(r)) => Err(io::Error::new(io::ErrorKind::InvalidData, r.to_string())),
        }
    }

    /// Turns the records into typed rows, rejecting a record whose field count is not `columns`.
    pub fn rows<T>(
        self,
        columns: usize,
        mut parse: impl FnMut(&[String]) -> Result<T, String> + Send,
    ) -> impl Iterator<Item = Parsed<T>> + Send {
        let file = self.file.clone();
        self.map(move |item| {
            let (line, fields) = item?;
            let reject = |reason: String| Rejection {
                file: file.clone(),
                line,
                reason,
            };
            if fields.len() != columns {
                return Err(reject(format!(
                    "expected {columns} columns, found {}",
                    fields.len()
                )));
            }
            parse(&fields).map(|row| (line, row)).map_err(reject)
        })
    }

    /// Reads the next physical line into `buf`; `false` at the end of the input.
    fn read_line(&mut self) -> io::Result<bool> {
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf)?;
        if n > 0 {
            self.line += 1;
        }
        Ok(n > 0)
    }

    fn read_record(&mut self) -> io::Result<Option<(u64, Vec<String>)>> {
        // skip blank lines
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            if !matches!(self.buf.as_slice(), b"\n" | b"\r\n" | b"\r" | b"") {
                break;
            }
        }
        let start = self.line;
        let mut fields: Vec<String> = Vec::new();
        let mut cur: Vec<u8> = Vec::new();
        let mut state = FieldState::Start;
        loop {
            let mut ended = false;
            let mut i = 0;
            while i < self.buf.len() {
                let b = self.buf[i];
                let at_terminator =
                    b == b'\n' || (b == b'\r' && matches!(self.buf.get(i + 1), None | Some(b'\n')));
                match state {
                    FieldState::Quoted => {
                        if b == b'"' {
                            state = FieldState::QuoteInQuoted;
                        } else {
                            cur.push(b);
                        }
                    }
                    FieldState::QuoteInQuoted if b == b'"' => {
                        cur.push(b'"');
                        state = FieldState::Quoted;
                    }
                    FieldState::Start if b == b'"' => state = FieldState::Quoted,
                    FieldState::Start | FieldState::Unquoted | FieldState::QuoteInQuoted => {
                        if at_terminator {
                            ended = true;
                            break;
                        } else if b == b',' {
                            fields.push(decode(&cur));
                            cur.clear();
                            state = FieldState::Start;
                        } else {
                            cur.push(b);
                            state = FieldState::Unquoted;
                        }
                    }
                }
                i += 1;
            }
            // the line ran out inside quotes: the field continues on the next physical line
            if ended || state != FieldState::Quoted || !self.read_line()? {
                break;
            }
        }
        fields.push(decode(&cur));
        Ok(Some((start, fields)))
    }
}

impl Iterator for CsvSource {
    type Item = Result<(u64, Vec<String>), Rejection>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.read_record() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(e) => {
                // an I/O error mid-file: nothing after it can be trusted, so stop here
                self.finished = true;
                Some(Err(Rejection {
                    file: self.file.clone(),
                    line: self.line + 1,
                    reason: format!("unreadable: {e}"),
                }))
            }
        }
    }
}

/// Splits one CSV line into decoded fields (used on first lines, for detection).
pub(crate) fn parse_line(line: &[u8]) -> Vec<String> {
    let reader: Box<dyn BufRead + Send> = Box::new(Cursor::new(line.to_vec()));
    let mut source = CsvSource::new(String::new(), reader);
    match source.next() {
        Some(Ok((_, fields))) => fields,
        Some(Err(_)) | None => Vec::new(),
    }
}

/// A column name in lower-kebab case: `LMK_KEY`, `lmk_key`, `lmk-key` and `Lmk Key` are all `lmk-key`.
pub(crate) fn normalise_name(name: &str) -> String {
    name.trim_start_matches('\u{feff}')
        .trim()
        .chars()
        .map(|c| {
            if c == '_' || c.is_whitespace() {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Column positions by normalised name.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub names: Vec<String>,
}

impl Header {
    pub fn new(names: Vec<String>) -> Self {
        Self { names }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The position of the first of `candidates` (in the order given) that is a column.
    pub fn find(&self, candidates: &[&str]) -> Option<usize> {
        candidates
            .iter()
            .find_map(|c| self.names.iter().position(|n| n == c))
    }

    /// Like [`Header::find`], but a missing column is an `InvalidData` error naming the file.
    pub fn require(&self, file: &str, candidates: &[&str]) -> io::Result<usize> {
        self.find(candidates).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{file}: header has no {} column", candidates.join(" or ")),
            )
        })
    }
}

/// The field at `idx`, trimmed, or `None` when the column is absent or the value blank.
pub(crate) fn field(fields: &[String], idx: Option<usize>) -> Option<&str> {
    let v = fields.get(idx?)?.trim();
    (!v.is_empty()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::temp_file;

    #[test]
    fn names_normalise() {
        for n in [
            "LMK_KEY",
            "lmk-key",
            "lmk_key",
            " Lmk Key ",
            "\u{feff}LMK_KEY",
        ] {
            assert_eq!(normalise_name(n), "lmk-key");
        }
    }

    #[test]
    fn lines_are_physical() {
        let f = temp_file(b"a,b\r\n1,\"two\nlines\"\r\n\r\n3,4\n5\n\xff,x\n");
        let opened = Opened::open(f.path()).expect("open");
        assert_eq!(opened.first_line(), b"a,b");
        let mut src = opened.into_source();
        assert_eq!(
            src.header().expect("header"),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        let rows: Vec<_> = src.rows(2, |f| Ok(f.join("|"))).collect();
        let lines: Vec<_> = rows
            .iter()
            .map(|r| r.as_ref().map_or_else(|e| e.line, |r| r.0))
            .collect();
        assert_eq!(lines, vec![2, 5, 6, 7]);
        assert_eq!(rows[0].as_ref().map(|r| r.1.as_str()), Ok("1|two\nlines"));
        assert!(
            rows[2]
                .as_ref()
                .is_err_and(|e| e.reason.contains("expected 2 columns"))
        );
        // not UTF-8: read as Latin-1
        assert_eq!(rows[3].as_ref().map(|r| r.1.as_str()), Ok("\u{ff}|x"));
    }

    #[test]
    fn dialect() {
        let f =
            temp_file(b"\"a \"\"b\"\"\",x\"y,\"c\"d,\"multi\r\nline\"\r\n\n \nlast,\"open\nquote");
        let src = Opened::open(f.path()).expect("open").into_source();
        let records: Vec<_> = src.map(|r| r.expect("readable")).collect();
        assert_eq!(
            records,
            vec![
                (
                    1,
                    vec![
                        "a \"b\"".to_string(),
                        "x\"y".into(),
                        "cd".into(),
                        "multi\r\nline".into()
                    ]
                ),
                (4, vec![" ".to_string()]),
                (5, vec!["last".to_string(), "open\nquote".into()]),
            ]
        );
        // the same fields as the csv crate
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_path(f.path())
            .expect("open");
        let theirs: Vec<Vec<String>> = reader
            .byte_records()
            .map(|r| r.expect("readable").iter().map(decode).collect())
            .collect();
        assert_eq!(records.into_iter().map(|r| r.1).collect::<Vec<_>>(), theirs);
        assert_eq!(parse_line(b"a,,\"b,c\""), vec!["a", "", "b,c"]);
        assert_eq!(parse_line(b""), Vec::<String>::new());
    }

    /// The hand-written parser agrees with the `csv` crate, field for field, on the real samples.
    #[test]
    fn agrees_with_csv_crate_on_real_samples() {
        for rel in [
            "exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv",
            "exeter/joined_uprn_epc_rating_exeter_451rows.csv",
            "format_refs/linked_ppd_epc_mole_valley_30rows.csv",
            "planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv",
            "business_rates/council_nndr_bradford_first200.csv",
            "isle_of_wight/ppd_monthly/April_2025.csv",
            "postcodes/codepoint_open_column_headers.csv",
        ] {
            let Some(p) = crate::formats::testutil::sample(rel) else {
                continue;
            };
            let ours: Vec<Vec<String>> = Opened::open(&p)
                .expect("open")
                .into_source()
                .map(|r| r.expect("readable").1)
                .collect();
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_path(&p)
                .expect("open");
            let theirs: Vec<Vec<String>> = reader
                .byte_records()
                .map(|r| r.expect("readable").iter().map(decode).collect())
                .collect();
            assert_eq!(ours.len(), theirs.len(), "{rel}");
            for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert_eq!(a, b, "{rel} record {i}");
            }
        }
    }

    #[test]
    fn empty_file() {
        let f = temp_file(b"");
        let mut src = Opened::open(f.path()).expect("open").into_source();
        assert_eq!(src.header().expect("no error"), None);
        assert!(src.next().is_none());
    }
}

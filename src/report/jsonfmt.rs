//! JSON layout for reports: indented down to a depth, one compact line per deeper value,
//! so a list of 5,000 writes reads (and greps) as 5,000 lines.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// Pretty for containers down to `max_depth`, compact inside them.
pub(crate) struct LinesFormatter {
    depth: usize,
    max_depth: usize,
    has_value: bool,
}

impl LinesFormatter {
    pub(crate) fn new(max_depth: usize) -> Self {
        LinesFormatter {
            depth: 0,
            max_depth,
            has_value: false,
        }
    }

    fn pretty(&self) -> bool {
        self.depth <= self.max_depth
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for LinesFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let was_pretty = self.pretty();
        self.depth -= 1;
        if was_pretty && self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.pretty() {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let was_pretty = self.pretty();
        self.depth -= 1;
        if was_pretty && self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.pretty() {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.pretty() { b": " } else { b":" })
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Serialises `value` with the report layout (three levels indented), ending in a newline.
pub(crate) fn to_string<T: Serialize>(value: &T) -> serde_json::Result<String> {
    let mut buf = Vec::with_capacity(4096);
    to_writer(&mut buf, value)?;
    Ok(String::from_utf8(buf).expect("serde_json writes UTF-8"))
}

/// As `to_string`, streamed into a writer.
pub(crate) fn to_writer<W: Write, T: Serialize>(w: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, LinesFormatter::new(3));
    value.serialize(&mut ser)?;
    ser.into_inner()
        .write_all(b"\n")
        .map_err(serde_json::Error::io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_values_on_one_line_and_round_trip() {
        let v = json!({"a": {"list": [{"x": 1, "y": [1, 2]}, {"x": 2, "y": []}], "empty": {}}, "b": []});
        let s = to_string(&v).unwrap();
        assert_eq!(
            s,
            "{\n  \"a\": {\n    \"empty\": {},\n    \"list\": [\n      {\"x\":1,\"y\":[1,2]},\n      {\"x\":2,\"y\":[]}\n    ]\n  },\n  \"b\": []\n}\n"
        );
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}

//! An incremental decoder for server-sent events (the WHATWG `text/event-stream` format).
//!
//! It takes bytes exactly as the network delivers them. Lines are split on raw bytes before
//! any UTF-8 decoding; since no byte of a multi-byte UTF-8 character is `\n` or `\r`, a
//! character split across two network chunks is simply completed by the next chunk.

/// One dispatched event: its `event:` name (empty when none was given) and its `data:`
/// lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    buffer: Vec<u8>,
    /// The last chunk ended in `\r`; a `\n` starting the next one belongs to that line end.
    skip_lf: bool,
    bom_checked: bool,
    /// How many bytes at the start of `buffer` are known to hold no line end, so a long
    /// line arriving in many chunks is scanned once, not once per chunk.
    scanned: usize,
    pending: Pending,
}

/// The event being built from the lines seen since the last blank line.
#[derive(Debug, Default)]
struct Pending {
    event: String,
    data: String,
    has_data: bool,
}

/// A line of the stream was not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidUtf8 {
    /// The offending line, lossily decoded, for the error message.
    pub line: String,
}

impl SseDecoder {
    /// Feeds one chunk, appending every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), InvalidUtf8> {
        let mut chunk = chunk;
        if self.skip_lf && !chunk.is_empty() {
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            self.skip_lf = false;
        }
        self.buffer.extend_from_slice(chunk);
        if !self.bom_checked && self.buffer.len() >= 3 {
            if self.buffer.starts_with(b"\xEF\xBB\xBF") {
                self.buffer.drain(..3);
            }
            self.bom_checked = true;
        }

        let mut start = 0;
        let mut search_from = self.scanned.min(self.buffer.len());
        let mut result = Ok(());
        while let Some(offset) = self.buffer[search_from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = search_from + offset;
            let line_end_len = match (self.buffer[end], self.buffer.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) => {
                    self.skip_lf = true;
                    1
                }
                _ => 1,
            };
            result = self.pending.process_line(&self.buffer[start..end], out);
            start = end + line_end_len;
            search_from = start;
            if result.is_err() {
                break;
            }
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        result
    }

    /// The bytes held for the event not yet dispatched: a line without its end, and the
    /// fields read since the last blank line. A caller caps this, since a server that never
    /// ends a line or an event would otherwise grow it without bound.
    pub fn buffered(&self) -> usize {
        self.buffer.len() + self.pending.event.len() + self.pending.data.len()
    }

    /// Ends the stream: an event still being built is dispatched, because some servers omit
    /// the blank line after the last event. A partial line without its end is used too.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), InvalidUtf8> {
        if !self.buffer.is_empty() {
            let line = std::mem::take(&mut self.buffer);
            self.scanned = 0;
            self.pending.process_line(&line, out)?;
        }
        self.pending.dispatch(out);
        Ok(())
    }
}

impl Pending {
    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), InvalidUtf8> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| InvalidUtf8 {
            line: String::from_utf8_lossy(line).into_owned(),
        })?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` steer browser reconnection, which no LLM API relies on.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

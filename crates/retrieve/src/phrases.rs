//! Messages a task quotes: what a program printed when it failed (an exception's message, a
//! panic's, an `error:` line) and text the task puts in double quotes, each cut to the longest
//! run of it that the source printing it would hold as written ([`messages`]).

/// The most messages one query yields.
pub const MAX_MESSAGES: usize = 8;
/// A run shorter than this many words says too little to look for.
const MIN_WORDS: usize = 3;
/// A quoted text longer than this is not a message.
const MAX_QUOTED: usize = 200;

/// The literal runs of the messages `text` quotes, first seen first, each once: for every
/// line that reports an error (`ValueError: ...`, `panic: ...`, `panicked at '...'`,
/// `error: ...`, `Exception in thread "main" java.lang.X: ...`, a program's own `ERROR: ...`,
/// `fatal: ...`, `[bat error]: ...` or `[ERROR] ...`) its message, and every text in
/// double quotes of three words or more outside fenced code blocks (` ``` ` or `~~~`); each
/// cut at the words that look like values a program fills in (numbers, one letter, quoted or
/// bracketed things), keeping the longest run of at least three plain words: `Velocity of
/// point Q has not been defined in ReferenceFrame A` gives `has not been defined in
/// ReferenceFrame`.
pub fn messages(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |message: &str| {
        if let Some(run) = longest_run(message)
            && out.len() < MAX_MESSAGES
            && !out.contains(&run)
        {
            out.push(run);
        }
    };
    let mut fences = Fences::default();
    for line in text.lines() {
        if fences.is_fence(line) {
            continue;
        }
        if let Some(message) = error_message(line.trim()) {
            add(message);
        }
        // In a code block, quotes hold the code's own strings (a traceback's source lines),
        // which the files the block names already say.
        if !fences.inside() {
            for quoted in quoted(line) {
                add(quoted);
            }
        }
    }
    out
}

/// The message of a line that reports an error, if it is one.
fn error_message(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("panic: ") {
        return Some(rest);
    }
    if let Some(at) = line.find("panicked at '") {
        let rest = &line[at + "panicked at '".len()..];
        return Some(rest.rsplit_once('\'').map_or(rest, |(m, _)| m));
    }
    // rustc's `error[E0308]: ...` (a bare `error: ...` is a program's own error line, below).
    if let Some(rest) = line
        .strip_prefix("error[")
        .and_then(|r| r.split_once("]: ").map(|(_, m)| m))
    {
        return Some(rest);
    }
    // A build tool's level: Maven's `[ERROR] Failed to execute goal ...`, sbt's `[error] ...`.
    if let Some(rest) = line
        .get(..8)
        .filter(|level| level.eq_ignore_ascii_case("[error] "))
        .map(|_| &line[8..])
    {
        return Some(rest);
    }
    // `ValueError: ...`, `sympy.polys.PolynomialError: ...`, `... java.lang.IllegalStateException: ...`
    let (head, message) = line.split_once(": ")?;
    let name = head.rsplit(['.', ' ']).next()?;
    if ["Error", "Exception", "Warning"]
        .iter()
        .any(|end| name.ends_with(end) && name.chars().all(|c| c.is_ascii_alphanumeric()))
    {
        return Some(message);
    }
    // A program's own error line: `ERROR: ...`, `fatal: ...`, `[bat error]: ...`, `clang: error:
    // ...`; not a sentence that says "an error: ...".
    let mut at = 0;
    while let Some(i) = line[at..].find(": ").map(|i| at + i) {
        if says_error(&line[..i]) {
            return Some(&line[i + 2..]);
        }
        at = i + 2;
    }
    None
}

/// Whether what comes before a `: ` is a program saying error: the word alone, in any case
/// (`ERROR`, `fatal`), after program names (`clang: error`), or last in brackets (`[bat
/// error]`).
fn says_error(head: &str) -> bool {
    let is_error = |w: &str| ["error", "fatal"].iter().any(|e| w.eq_ignore_ascii_case(e));
    if let Some(inside) = head.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inside.rsplit(' ').next().is_some_and(is_error);
    }
    let (names, word) = head.rsplit_once(": ").unwrap_or(("", head));
    is_error(word)
        && (names.is_empty()
            || names
                .split(": ")
                .all(|p| !p.is_empty() && !p.contains(char::is_whitespace)))
}

/// The texts in double quotes on one line.
fn quoted(line: &str) -> impl Iterator<Item = &str> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .filter(|q| q.len() <= MAX_QUOTED && q.split_whitespace().count() >= MIN_WORDS)
}

/// Whether a word is one a message is written with, not a value filled in.
fn is_plain(word: &str) -> bool {
    let w = word.trim_end_matches([',', '.', ';', ':', '!', '?']);
    w.len() >= 2
        && w.chars()
            .all(|c| c.is_alphabetic() || matches!(c, '-' | '\'' | '_'))
        && !w.starts_with(['\'', '-'])
        && !w.ends_with('\'')
}

/// The longest run of plain words in `message` (at least [`MIN_WORDS`]), as written.
fn longest_run(message: &str) -> Option<String> {
    let mut best: Option<(usize, usize, usize)> = None; // (words, start, end) in bytes
    let mut run: Option<(usize, usize, usize)> = None;
    let mut offset = 0;
    for word in message.split(' ') {
        let (start, end) = (offset, offset + word.len());
        offset = end + 1;
        if !word.is_empty() && is_plain(word) {
            run = Some(match run {
                Some((n, s, _)) => (n + 1, s, end),
                None => (1, start, end),
            });
            if let Some(r) = run
                && r.0 >= MIN_WORDS
                && best.is_none_or(|b| r.0 > b.0)
            {
                best = Some(r);
            }
        } else {
            run = None;
        }
    }
    best.map(|(_, s, e)| message[s..e].trim_end_matches([',', ';', ':']).to_owned())
}

/// Which fenced code block a text is in, line by line: Markdown's ` ``` ` and `~~~`, a block
/// closed only by the fence that opened it (a `~~~` line inside a ` ``` ` block is code).
#[derive(Default)]
pub(crate) struct Fences {
    open: Option<&'static str>,
}

impl Fences {
    /// Whether `line` opens or closes a block (it is then neither code nor text); the state
    /// follows it.
    pub(crate) fn is_fence(&mut self, line: &str) -> bool {
        let trimmed = line.trim_start();
        let Some(fence) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) else {
            return false;
        };
        match self.open {
            None => self.open = Some(fence),
            Some(open) if open == fence => self.open = None,
            Some(_) => return false,
        }
        true
    }

    /// Whether the lines since the last fence are inside a block.
    pub(crate) fn inside(&self) -> bool {
        self.open.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::messages;

    #[test]
    fn error_lines_and_quotes_give_the_runs_a_source_would_hold() {
        let text = "Calling it fails:\n\
            ```\n\
            Traceback (most recent call last):\n\
              File \"x.py\", line 3, in <module>\n\
            ValueError: Velocity of point Q has not been defined in ReferenceFrame A\n\
            sympy.polys.polyerrors.PolynomialError: Piecewise generators do not make sense\n\
            ```\n\
            thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:2:5\n\
            panic: runtime error: index out of range [5] with length 3\n\
            error[E0308]: mismatched types in this call\n\
            Exception in thread \"main\" java.lang.IllegalStateException: Expected BEGIN_OBJECT but was STRING\n\
            The docs say \"use the binary mode for files\" and \"x\".\n\
            ```\n\
                \"\"\"Returns the printer's representation\"\"\"\n\
            ```\n\
            ~~~\n\
            log(\"a string of the code shown\")\n\
            ```\n\
            log(\"still the code of that block\")\n\
            ~~~\n";
        assert_eq!(
            messages(text),
            [
                "has not been defined in ReferenceFrame",
                "Piecewise generators do not make sense",
                "runtime error: index out of range",
                "mismatched types in this call",
                "Expected BEGIN_OBJECT but was STRING",
                "use the binary mode for files",
            ]
        );
    }

    #[test]
    fn a_programs_own_error_lines_give_their_messages() {
        let text = "```\n\
            [bat error]: The output file is also an input!\n\
            ERROR: could not find the project root here\n\
            fatal: unable to read the current working directory\n\
            clang: error: linker command failed with exit code\n\
            [ERROR] Failed to execute goal on project core\n\
            [error] the sbt compiler could not resolve it\n\
            terror: this line reports nothing at all\n\
            ```\n\
            With that flag I see an error: the build fails when linking\n\
            The [bat error]: wording is what it prints here\n";
        assert_eq!(
            messages(text),
            [
                "The output file is also an input!",
                "could not find the project root here",
                "unable to read the current working directory",
                "linker command failed with exit code",
                "Failed to execute goal on project core",
                "the sbt compiler could not resolve it",
            ]
        );
    }

    #[test]
    fn short_or_value_only_messages_give_nothing() {
        assert_eq!(
            messages("KeyError: 'x'\nIndexError: 3\nplain words only"),
            Vec::<String>::new()
        );
        assert_eq!(messages(""), Vec::<String>::new());
    }
}

//! What a file's lines hold of a query: the proximity signal (one definition holding much of
//! a task's words) and the definitions a hit lists.
use super::*;

/// The facts and text of files a search has read, by path: read once for proximity and the hits.
pub(super) type ReadFiles<'a> = HashMap<&'a str, (FileFacts, Option<String>)>;

/// The proximity signal ([`W_PROXIMITY`]) of the [`PROXIMITY_FILES`] best files so far (by
/// every other signal, before the prior), read from their text: for each, the function or
/// method holding the most of `telling` (distinct words, each by its weight), over its length
/// in lines to the power [`PROXIMITY_LENGTH`]; divided by the best file's.
pub(super) fn proximity<'a>(
    store: &Store,
    facts: &'a TreeFacts,
    scores: &mut Scores<'a>,
    telling: &[(String, f64)],
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Result<ReadFiles<'a>> {
    let mut best: Vec<(f64, &FileEntry)> = scores
        .iter()
        .map(|(f, s)| (s.total(), f))
        .filter(|(x, f)| *x > 0.0 && in_scope(f))
        .collect();
    first_of(&mut best, PROXIMITY_FILES, |a, b| {
        b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path))
    });
    let files: Vec<&FileEntry> = best.into_iter().map(|b| b.1).collect();
    let their = facts.facts_of(store, &files)?;
    let ids: HashMap<&str, usize> = telling
        .iter()
        .enumerate()
        .map(|(i, (w, _))| (w.as_str(), i))
        .collect();
    // Each file read and weighed on one of two threads of their own (the pool may be busy with
    // a rescan running beside); a watch vouching for the tree leaves the second core idle here.
    let pairs: Vec<(&FileEntry, &FileFacts)> = files.iter().copied().zip(&their).collect();
    let weighed = on_two_threads(&pairs, |(f, ff)| -> Result<_> {
        let text = read_text(store, f)?;
        let held = text
            .as_deref()
            .map_or((0.0, None), |text| most_held(ff, text, &ids, telling));
        Ok((text, held))
    });
    let mut texts = Vec::with_capacity(files.len());
    let mut held = Vec::with_capacity(files.len());
    for w in weighed {
        let (text, h) = w?;
        texts.push(text);
        held.push(h);
    }
    let top = held.iter().map(|h| h.0).fold(0.0, f64::max);
    if top > 0.0 {
        for (f, (h, name)) in files.iter().zip(held) {
            if let Some(s) = scores.get_mut(&f.path) {
                s.proximity = W_PROXIMITY * h / top;
                s.together = name;
            }
        }
    }
    Ok(files
        .into_iter()
        .map(|f| f.path.as_str())
        .zip(their.into_iter().zip(texts))
        .collect())
}

/// Of the functions and methods of `ff` (a file holding `text`), the most of the words of
/// `telling` (their ids in `ids`) that one holds, each by its weight, over its length in lines
/// to the power [`PROXIMITY_LENGTH`]; with its name where it holds two words or more.
fn most_held(
    ff: &FileFacts,
    text: &str,
    ids: &HashMap<&str, usize>,
    telling: &[(String, f64)],
) -> (f64, Option<String>) {
    let lines = line_terms(text, ids);
    let mut seen = vec![false; telling.len()];
    let mut most: (f64, Option<&str>) = (0.0, None);
    for s in &ff.symbols {
        if !matches!(s.kind, Kind::Function | Kind::Method) {
            continue;
        }
        let start = s.line.max(1) - 1;
        let end = s.end_line.max(s.line).min(lines.len());
        if end <= start {
            continue;
        }
        seen.fill(false);
        let (mut sum, mut distinct) = (0.0, 0);
        for &i in lines[start..end].iter().flatten() {
            if !std::mem::replace(&mut seen[i], true) {
                sum += telling[i].1;
                distinct += 1;
            }
        }
        let share = sum / ((end - start) as f64).powf(PROXIMITY_LENGTH);
        if share > most.0 {
            // Named in `why` where it holds two words or more.
            most = (share, (distinct > 1).then_some(s.name.as_str()));
        }
    }
    (most.0, most.1.map(str::to_owned))
}

/// For each line of `text` (as [`str::lines`] cuts them), the ids (in `ids`) of the words its
/// tokens are, one per occurrence. A token of an ASCII line is a piece of that line in
/// lowercase, so such a line is tokenized only where some word occurs in it that way.
fn line_terms(text: &str, ids: &HashMap<&str, usize>) -> Vec<Vec<usize>> {
    let lower = text.to_ascii_lowercase();
    let mut at: Vec<usize> = ids
        .keys()
        .flat_map(|w| memchr::memmem::find_iter(lower.as_bytes(), w.as_bytes()))
        .collect();
    at.sort_unstable();
    let mut next = 0;
    text.lines()
        .map(|line| {
            let start = line.as_ptr() as usize - text.as_ptr() as usize;
            while next < at.len() && at[next] < start {
                next += 1;
            }
            let mut found = Vec::new();
            if (next < at.len() && at[next] < start + line.len()) || !line.is_ascii() {
                retrieve::tokenize::tokens(line, |t, _, _, _| {
                    if let Some(&i) = ids.get(t) {
                        found.push(i);
                    }
                });
            }
            found
        })
        .collect()
}

/// A file's definitions that best match the query, and the query words its text holds (the
/// heaviest first, at most eight). A definition the query names comes first; then those whose
/// lines hold the most query words, by weight, per square root of their length, innermost
/// definitions winning ties.
pub(super) fn best_symbols(
    f: &FileFacts,
    content: Option<&str>,
    idents: &HashMap<&str, usize>,
    weights: &HashMap<&str, f32>,
    kind: Option<Kind>,
    max: usize,
) -> (Vec<SymbolHit>, Vec<String>) {
    // Query words per line.
    let words: Vec<(&str, f32)> = weights.iter().map(|(w, x)| (*w, *x)).collect();
    let ids: HashMap<&str, usize> = words.iter().enumerate().map(|(i, w)| (w.0, i)).collect();
    let mut line_weight: Vec<f64> = Vec::new();
    let mut matched = vec![false; words.len()];
    if let Some(text) = content {
        for line in line_terms(text, &ids) {
            let mut w = 0.0;
            for i in line {
                w += f64::from(words[i].1);
                matched[i] = true;
            }
            line_weight.push(w);
        }
    }
    let mut prefix = vec![0.0; line_weight.len() + 1];
    for (i, w) in line_weight.iter().enumerate() {
        prefix[i + 1] = prefix[i] + w;
    }
    // Where the file's functions and methods begin: a definition holding one is a container
    // (a class, a module), listed when the query names it but not for its words, since its
    // functions are the lines to read.
    let mut starts: Vec<usize> = f
        .symbols
        .iter()
        .filter(|s| matches!(s.kind, Kind::Function | Kind::Method))
        .map(|s| s.line)
        .collect();
    starts.sort_unstable();
    let holds_a_function = |line: usize, end: usize| {
        let i = starts.partition_point(|&l| l <= line);
        starts.get(i).is_some_and(|&l| l <= end)
    };
    let mut scored: Vec<(f64, &crate::facts::FactSymbol)> = f
        .symbols
        .iter()
        .filter(|s| kind.is_none_or(|k| s.kind == k))
        .filter(|s| !matches!(s.kind, Kind::Key | Kind::Impl))
        .filter_map(|s| {
            let start = s.line.clamp(1, prefix.len().max(1)) - 1;
            let end = s.end_line.max(s.line).min(prefix.len().saturating_sub(1));
            let body = if end > start {
                prefix[end] - prefix[start]
            } else {
                0.0
            };
            let len = (end.saturating_sub(start) + 1) as f64;
            // A definition the query names outranks any other; among those, the innermost.
            let score = if idents.contains_key(s.name.as_str()) {
                1e6 / len
            } else if kind.is_none() && holds_a_function(s.line, s.end_line) {
                // Asked for a kind (`--type class`), a container is what was asked for.
                0.0
            } else {
                body / len.sqrt()
            };
            (score > 0.0).then_some((score, s))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.line.cmp(&b.1.line)));
    let best = scored.first().map_or(1.0, |s| s.0);
    let symbols = scored
        .into_iter()
        .take(max)
        .map(|(score, s)| SymbolHit {
            name: s.name.clone(),
            kind: s.kind,
            line_start: s.line,
            line_end: s.end_line.max(s.line),
            signature: s.signature.clone(),
            score: score / best,
        })
        .collect();
    let mut words: Vec<(&str, f32)> = words
        .into_iter()
        .zip(matched)
        .filter_map(|(w, m)| m.then_some(w))
        .collect();
    words.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    (
        symbols,
        words
            .into_iter()
            .take(8)
            .map(|(w, _)| w.to_owned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_terms_finds_what_tokenizing_every_line_finds() {
        let text = "fn resolveRedirects() {\n  // nothing here\r\n  let \u{212A}elvin = HTTPServer::new();\n\n  redirects(kelvin); // naïve redirects\n}";
        let words = ["redirects", "kelvin", "server", "http", "resolveredirects"];
        let ids: HashMap<&str, usize> = words.iter().enumerate().map(|(i, w)| (*w, i)).collect();
        let every: Vec<Vec<usize>> = text
            .lines()
            .map(|line| {
                let mut found = Vec::new();
                retrieve::tokenize::tokens(line, |t, _, _, _| {
                    if let Some(&i) = ids.get(t) {
                        found.push(i);
                    }
                });
                found
            })
            .collect();
        assert_eq!(line_terms(text, &ids), every);
        assert_eq!(every[2], vec![1, 3, 2], "the Kelvin sign lowercases to k");
        assert_eq!(every[4], vec![0, 1, 0]);
    }
}

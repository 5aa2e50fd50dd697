//! Loading whichever kind of simulation file a user points at: a script, a recording or a
//! pattern file, told apart by their contents.

use std::path::Path;

use crate::error::Result;
use crate::playback::Playback;
use crate::script::{Script, read, yaml_error};
use crate::strategy::{Patterns, Scripted, Strategy};

/// The strategy a file describes: a pattern file has a top-level `patterns` list; a script
/// whose every step carries a `request` is a recording and is played back in order; any
/// other script is followed step by step.
pub fn load_strategy(path: &Path) -> Result<Box<dyn Strategy>> {
    let text = read(path)?;
    parse_strategy(&text, &path.display().to_string())
}

/// [`load_strategy`] for text already read; `origin` names it in errors.
pub fn parse_strategy(text: &str, origin: &str) -> Result<Box<dyn Strategy>> {
    let value: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|err| yaml_error(&err, origin))?;
    if value.get("patterns").is_some() {
        return Ok(Box::new(Patterns::parse(text, origin)?));
    }
    let script = Script::parse(text, origin)?;
    let recording =
        !script.responses.is_empty() && script.responses.iter().all(|step| step.request.is_some());
    if recording {
        Ok(Box::new(Playback::new(script, origin)?))
    } else {
        Ok(Box::new(Scripted::new(script)))
    }
}

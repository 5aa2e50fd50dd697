//! The providers' wire formats as serde types, one module per format.
//!
//! The clients in this crate encode requests and decode answers with them, and the fake
//! server in `llm-sim` decodes requests and encodes answers with the very same types, so a
//! field the client writes is a field the simulator reads. They are public for that reason
//! only: the rest of the workspace speaks [`crate::types`].

pub mod anthropic;
pub mod batch;
pub mod openai;
pub mod responses;

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Content the APIs take either as a plain string or as a list of blocks (Anthropic's system
/// prompt, message content and tool result content; a chat message's content parts; the
/// Responses API's input, an input message's content and a function call's output).
#[derive(Debug, Clone, PartialEq)]
pub enum TextOrBlocks<B> {
    Text(String),
    Blocks(Vec<B>),
}

impl<B> TextOrBlocks<B> {
    /// The text: the string, or the text `text` finds in each block, one block a line.
    pub fn joined_text(self, text: impl Fn(B) -> Option<String>) -> String {
        match self {
            Self::Text(t) => t,
            Self::Blocks(blocks) => blocks
                .into_iter()
                .filter_map(text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl<B: Serialize> Serialize for TextOrBlocks<B> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de, B: Deserialize<'de>> Deserialize<'de> for TextOrBlocks<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Written out rather than `#[serde(untagged)]`, whose error ("data did not match
        // any variant") would hide what was wrong inside a block.
        struct TextOrBlocksVisitor<B>(PhantomData<B>);

        impl<'de, B: Deserialize<'de>> Visitor<'de> for TextOrBlocksVisitor<B> {
            type Value = TextOrBlocks<B>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(TextOrBlocks::Text(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(TextOrBlocks::Text(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(TextOrBlocks::Blocks)
            }
        }

        deserializer.deserialize_any(TextOrBlocksVisitor(PhantomData))
    }
}

/// A field where `null` means the same as leaving it out.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A string field a client only reports (a response's `service_tier`): any other value, or
/// none, reads as absent rather than refusing the body.
pub(crate) fn lenient_string<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => Some(text),
        _ => None,
    })
}

/// A list of strings, of which a lone string is the one item.
pub(crate) fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    Ok(
        match Option::<TextOrBlocks<String>>::deserialize(deserializer)? {
            None => Vec::new(),
            Some(TextOrBlocks::Text(text)) => vec![text],
            Some(TextOrBlocks::Blocks(list)) => list,
        },
    )
}

/// The tool-choice modes both OpenAI APIs write as a bare string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChoiceMode {
    Auto,
    Required,
    None,
}

/// A tool choice as both OpenAI APIs write it: a mode string, or an object of shape `N` (which
/// differs between the two) naming one function.
pub(crate) fn tool_choice<'de, D, N>(deserializer: D) -> Result<Result<ChoiceMode, N>, D::Error>
where
    D: Deserializer<'de>,
    N: Deserialize<'de>,
{
    struct ChoiceVisitor<N>(PhantomData<N>);

    impl<'de, N: Deserialize<'de>> Visitor<'de> for ChoiceVisitor<N> {
        type Value = Result<ChoiceMode, N>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("auto, required, none or a named function")
        }

        fn visit_str<E: de::Error>(self, mode: &str) -> Result<Self::Value, E> {
            match mode {
                "auto" => Ok(Ok(ChoiceMode::Auto)),
                "required" => Ok(Ok(ChoiceMode::Required)),
                "none" => Ok(Ok(ChoiceMode::None)),
                other => Err(E::unknown_variant(other, &["auto", "required", "none"])),
            }
        }

        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            N::deserialize(de::value::MapAccessDeserializer::new(map)).map(Err)
        }
    }

    deserializer.deserialize_any(ChoiceVisitor(PhantomData))
}

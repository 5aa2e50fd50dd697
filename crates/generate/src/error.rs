//! Generation's one error type: every variant names the input or the call at fault.

/// Errors from a generation: the model, the store, context's operations and provider batches.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("model call failed: {0}")]
    Model(#[from] llm_core::Error),
    #[error("store: {0}")]
    Store(#[from] merkle_store::Error),
    /// A context operation's error (a generation's), worded as context words it.
    #[error(transparent)]
    Context(#[from] context::Error),
    #[error("batch {id} failed: {errors}")]
    BatchFailed { id: String, errors: String },
    #[error(
        "stopped waiting for batch {id}; it keeps running at the provider, and the same \
         command run again picks it up"
    )]
    BatchWaitInterrupted { id: String },
    #[error(
        "interrupted: the {} that finished {} saved; run the same generate again to resume",
        model_calls(*.calls),
        if *.calls == 1 { "has its frame" } else { "have their frames" }
    )]
    Interrupted { calls: u64 },
    #[error(
        "a batched generation needs a provider with a batch API; {} has none",
        .provider.as_deref().unwrap_or("the offline producer")
    )]
    NoBatchApi { provider: Option<String> },
    #[error("the llm directory policy needs a model")]
    PolicyNeedsModel,
}

/// Generation's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `1 model call`, `2 model calls`.
fn model_calls(n: u64) -> String {
    if n == 1 {
        "1 model call".to_owned()
    } else {
        format!("{n} model calls")
    }
}

impl Error {
    /// What kind of failure it is, as front ends name it: that of the shared operations'
    /// error it carries ([`context::Error::kind`]), else `error`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Context(c) => c.kind(),
            _ => "error",
        }
    }
}

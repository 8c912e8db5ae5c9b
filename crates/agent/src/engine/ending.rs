//! How a run, or a model response, ends before its time: the code of the run's `error`, and
//! the `finish_reason` of a response cut short. Every room that ends something reads these;
//! they read nothing back.

use weft_protocol::FinishReason;

/// The code of the `error` a run fails with. The host's own codes come in as text
/// ([`Input::HostFailed`](super::Input::HostFailed)) and keep their spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ErrorCode {
    /// The client cancelled the run.
    Cancelled,
    /// The model call of the run's own conversation failed.
    Provider,
    /// got: the model gave no valid plan twice.
    InvalidPlan,
    /// got: every sub-task that gives the answer failed.
    GraphFailed,
    /// A code of the host's (`storage`, …).
    Host(String),
}

impl ErrorCode {
    pub(super) fn as_str(&self) -> &str {
        match self {
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Provider => "provider",
            ErrorCode::InvalidPlan => "invalid_plan",
            ErrorCode::GraphFailed => "graph_failed",
            ErrorCode::Host(code) => code,
        }
    }

    /// How the responses a failure cuts short end: a cancel is no error of the model's.
    pub(super) fn cut(&self) -> Cut {
        match self {
            ErrorCode::Cancelled => Cut::Cancelled,
            _ => Cut::Error,
        }
    }
}

impl From<String> for ErrorCode {
    fn from(code: String) -> Self {
        match code.as_str() {
            "cancelled" => ErrorCode::Cancelled,
            "provider" => ErrorCode::Provider,
            "invalid_plan" => ErrorCode::InvalidPlan,
            "graph_failed" => ErrorCode::GraphFailed,
            _ => ErrorCode::Host(code),
        }
    }
}

/// Why a model response ends before its stream did: the `finish_reason` of its `llm_complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The run ended (cancelled, `no-exit`, a pause): the text said so far stands.
    Cancelled,
    /// The run failed.
    Error,
    /// A restart: what went out after the checkpoint is unknown.
    Interrupted,
}

impl Cut {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Cut::Cancelled => "cancelled",
            Cut::Error => "error",
            Cut::Interrupted => "interrupted",
        }
    }

    pub(super) fn finish_reason(self) -> FinishReason {
        FinishReason::from(self.as_str())
    }
}

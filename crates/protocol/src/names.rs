//! Open and closed string enums of the wire: agent names, roles, finish reasons, reviews.
//!
//! Open enums keep values they do not know in `Unknown(String)`, so a newer peer's agent or
//! finish reason passes through unchanged instead of failing the whole frame (STYLE 6).

use alloc::string::String;
use core::fmt;
use serde::{Serialize, Serializer};

use crate::field::Fields;
use crate::Error;

macro_rules! open_string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this version does not know, kept as sent.
            Unknown(String),
        }

        impl $name {
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Unknown(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($text => $name::$variant,)*
                    other => $name::Unknown(other.into()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

open_string_enum! {
    /// Which agent runs a message (loom `agent`); `react` by default.
    #[derive(Default)]
    #[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(type = "\"react\" | \"dup\" | \"tot\" | \"got\" | (string & {})"))]
    Agent {
        /// think → act → observe loop.
        #[default]
        React = "react",
        /// "Deeply understanding problems": understand → plan → act → observe.
        Dup = "dup",
        /// Tree of thoughts.
        Tot = "tot",
        /// Graph of thoughts.
        Got = "got",
    }
}

open_string_enum! {
    /// Who said a message.
    #[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(type = "\"system\" | \"user\" | \"assistant\" | (string & {})"))]
    Role {
        /// The system prompt.
        System = "system",
        /// The person.
        User = "user",
        /// The model.
        Assistant = "assistant",
    }
}

open_string_enum! {
    /// Why an LLM response stopped, in OpenAI's spelling.
    #[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(type = "\"stop\" | \"tool_calls\" | \"length\" | \"content_filter\" | (string & {})"))]
    FinishReason {
        /// A natural end of the reply.
        Stop = "stop",
        /// The model called tools.
        ToolCalls = "tool_calls",
        /// The token limit was reached.
        Length = "length",
        /// Content was filtered.
        ContentFilter = "content_filter",
    }
}

/// The user's answer to an approval request (agentloop's review options).
///
/// Closed: a decision this version does not understand must not be taken for a "yes".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(type = "\"yes\" | \"no-continue\" | \"no-exit\" | \"always\" | \"explain\"")
)]
pub enum Review {
    /// Run this call.
    Yes,
    /// Do not run it; the model is told and goes on.
    NoContinue,
    /// Do not run it, and stop the run.
    NoExit,
    /// Run it, and stop asking for this tool in this session.
    Always,
    /// Ask the model to explain the call first, then ask again.
    Explain,
}

impl Review {
    /// Every decision, in the order a dialog would offer them.
    pub const ALL: [Review; 5] = [
        Review::Yes,
        Review::NoContinue,
        Review::NoExit,
        Review::Always,
        Review::Explain,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Review::Yes => "yes",
            Review::NoContinue => "no-continue",
            Review::NoExit => "no-exit",
            Review::Always => "always",
            Review::Explain => "explain",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Review> {
        Review::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether the tool runs after this decision.
    pub fn approves(self) -> bool {
        matches!(self, Review::Yes | Review::Always)
    }

    pub(crate) fn read(f: &Fields<'_>, name: &str) -> Result<Review, Error> {
        let s: String = f.req(name)?;
        Review::parse(&s).ok_or_else(|| {
            f.err(
                name,
                "must be one of \"yes\", \"no-continue\", \"no-exit\", \"always\", \"explain\"",
            )
        })
    }
}

impl Serialize for Review {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

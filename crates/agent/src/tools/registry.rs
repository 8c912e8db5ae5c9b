//! The tools of a session: the built-in ones plus those its clients declared.

use std::fmt;
use weft_protocol::sorted::SortedMap;

use serde_json::Value;
use weft_protocol::event::ToolSpec;

use super::builtin::Builtin;

/// The longest tool name accepted: the limit OpenAI and Anthropic both put on function names.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Why a client's tool declaration was refused. The message is meant for the client's
/// developer, who made the mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is a built-in tool's: a client may not replace what the server runs (the user
    /// would approve one thing and get another).
    ShadowsBuiltin {
        /// As the client declared it, so the error says which declaration was refused.
        name: String,
    },
    /// The name is empty, too long, or has characters providers refuse (only ASCII letters,
    /// digits, `_` and `-` pass everywhere).
    InvalidName {
        /// As the client declared it, so the error says which declaration was refused.
        name: String,
    },
    /// The input schema is not a JSON Schema object (`{"type": "object", ...}`), which every
    /// provider requires of a tool's parameters.
    InvalidSchema {
        /// As the client declared it, so the error says which declaration was refused.
        name: String,
        /// What is wrong with the schema.
        reason: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::ShadowsBuiltin { name } => write!(
                f,
                "client tool \"{name}\" has the name of a built-in tool; choose another name"
            ),
            RegistryError::InvalidName { name } => write!(
                f,
                "invalid tool name {name:?}: use 1 to {MAX_TOOL_NAME_LEN} ASCII letters, \
                 digits, '_' or '-'"
            ),
            RegistryError::InvalidSchema { name, reason } => {
                write!(f, "invalid input_schema of tool \"{name}\": {reason}")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    spec: ToolSpec,
    /// `None` for a client tool.
    builtin: Option<Builtin>,
}

/// The tools a session offers the model: every [`Builtin`] plus the tools clients declared
/// with `client_tools`, which the declaring client executes.
///
/// Names are unique: a client tool replaces an earlier client tool of the same name, and may
/// never take a built-in's name. Approval follows one rule for both kinds — a tool that can
/// change anything needs approval — so a client tool needs it unless declared `read_only`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRegistry {
    tools: SortedMap<String, Entry>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// A registry with the built-in tools only.
    pub fn new() -> Self {
        ToolRegistry {
            tools: Builtin::ALL
                .into_iter()
                .map(|b| {
                    (
                        b.name().to_string(),
                        Entry {
                            spec: b.spec(),
                            builtin: Some(b),
                        },
                    )
                })
                .collect(),
        }
    }

    /// Declares a client tool, replacing a client tool of the same name (returned).
    pub fn add_client_tool(&mut self, spec: ToolSpec) -> Result<Option<ToolSpec>, RegistryError> {
        check_client_tool(&spec)?;
        let previous = self.tools.insert(
            spec.name.clone(),
            Entry {
                spec,
                builtin: None,
            },
        );
        Ok(previous.map(|entry| entry.spec))
    }

    /// Declares several client tools at once: all of them, or — if one is refused — none.
    pub fn add_client_tools(
        &mut self,
        specs: impl IntoIterator<Item = ToolSpec>,
    ) -> Result<(), RegistryError> {
        let specs: Vec<ToolSpec> = specs.into_iter().collect();
        specs.iter().try_for_each(check_client_tool)?;
        for spec in specs {
            self.tools.insert(
                spec.name.clone(),
                Entry {
                    spec,
                    builtin: None,
                },
            );
        }
        Ok(())
    }

    /// Forgets a client tool (e.g. when the socket that declared it goes away). Built-in tools
    /// cannot be removed: `None`.
    pub fn remove_client_tool(&mut self, name: &str) -> Option<ToolSpec> {
        if !self.is_client(name) {
            return None;
        }
        self.tools.remove(name).map(|entry| entry.spec)
    }

    /// Forgets every client tool.
    pub fn clear_client_tools(&mut self) {
        self.tools.retain(|_, entry| entry.builtin.is_some());
    }

    /// Every tool, sorted by name: what the model is offered and what `tools_list` answers.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|entry| entry.spec.clone())
            .collect()
    }

    /// The client tools, sorted by name: what the host persists to restore the registry.
    pub fn client_specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools
            .values()
            .filter(|entry| entry.builtin.is_none())
            .map(|entry| &entry.spec)
    }

    /// A built-in or a client's tool, by the name the model calls it.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.get(name).map(|entry| &entry.spec)
    }

    /// The built-in tool called `name`: the host runs it with
    /// [`run_builtin`](super::run_builtin).
    pub fn builtin(&self, name: &str) -> Option<Builtin> {
        self.tools.get(name).and_then(|entry| entry.builtin)
    }

    /// Whether `name` is a client tool: its calls go to the client as `tool_call` events, and
    /// the run waits for its `tool_result`.
    pub fn is_client(&self, name: &str) -> bool {
        self.tools
            .get(name)
            .is_some_and(|entry| entry.builtin.is_none())
    }

    /// Whether a call of `name` must be approved by the user before it runs: built-in tools
    /// by [`Builtin::needs_approval`], client tools unless declared `read_only`. An unknown
    /// name answers `true` (fail closed), though such a call should be refused anyway.
    pub fn needs_approval(&self, name: &str) -> bool {
        match self.tools.get(name) {
            Some(Entry {
                builtin: Some(b), ..
            }) => b.needs_approval(),
            Some(Entry { spec, .. }) => !spec.read_only,
            None => true,
        }
    }
}

fn check_client_tool(spec: &ToolSpec) -> Result<(), RegistryError> {
    let name = &spec.name;
    if Builtin::from_name(name).is_some() {
        return Err(RegistryError::ShadowsBuiltin { name: name.clone() });
    }
    if name.is_empty()
        || name.len() > MAX_TOOL_NAME_LEN
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(RegistryError::InvalidName { name: name.clone() });
    }
    let invalid = |reason: &str| RegistryError::InvalidSchema {
        name: name.clone(),
        reason: reason.to_string(),
    };
    let schema = spec.input_schema.to_value();
    let Value::Object(schema) = &schema else {
        return Err(invalid("it must be a JSON object"));
    };
    match schema.get("type") {
        None => Ok(()),
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(_) => Err(invalid(
            "its \"type\" must be \"object\": a tool takes an object of named arguments",
        )),
    }
}

//! The agents a run may ask for by name, and what each runs with: weft's four, the operator's
//! overrides of them and named variants of them — `SYSTEM_PROMPT`, `AGENTS` and `DEFAULT_AGENT`
//! (README, "Agents").
//!
//! This is the one place agents are named. [`Agents::list`] is what every listing reads:
//! `/status` (and through it weft-sdk's `agents()` and the demo's picker), and loom's
//! `agent_list`. A run's agent is found by [`Agents::choose`]. A remote agent (an AG-UI agent
//! weft drives as a client, session/remote.rs) is one more kind of entry in `AGENTS` — an
//! entry with a `url` (and `headers`) instead of an `agent` — and one more [`Runs`] variant,
//! not a second setting that names agents.
//!
//! Plain data, read from a lookup of settings, so every rule is unit-tested natively: a setting
//! that cannot be read is refused whole with its reason (every run gets it, `/status` shows it,
//! the Worker logs it), never replaced by a default.

use std::cell::Cell;

use serde::Deserialize;
use weft_agent::engine::{Config, DEFAULT_SYSTEM_PROMPT, REMOTE};
use weft_agent::provider::Provider;
use weft_protocol::Agent;

use crate::mcp::config::fill_secrets;
use crate::settings::{Model, Settings};

/// weft's own agents, with what listings say of each.
pub const BUILT_IN: [(Agent, &str); 4] = [
    (
        Agent::React,
        "Reason and act: the model calls tools until it can answer",
    ),
    (Agent::Dup, "Understand, plan, act, observe"),
    (
        Agent::Tot,
        "Tree of thoughts: propose next steps, score them, act on the best, backtrack",
    ),
    (
        Agent::Got,
        "Graph of thoughts: plan sub-tasks as a graph and run them",
    ),
];

/// What carries out an agent's runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Runs {
    /// One of weft's own agents, in this Worker.
    Weft(Agent),
    /// An AG-UI agent elsewhere, which the Worker calls.
    Remote(Remote),
}

/// Where a remote agent is and what the Worker sends it besides the input.
#[derive(Clone, PartialEq)]
pub struct Remote {
    /// `http://` or `https://`, as the operator wrote it: the one host a run of it contacts.
    pub url: String,
    /// With every `${secret:NAME}` filled in: never shown (listings, `/status`, `Debug`).
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Remote")
            .field("url", &self.url)
            .field("headers", &names)
            .finish()
    }
}

impl Remote {
    /// The host (and port) the agent is reached at, for listings: no path, query or
    /// credentials, which may carry a key.
    pub fn host(&self) -> &str {
        let rest = self.url.split_once("://").map_or("", |(_, rest)| rest);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority.rsplit('@').next().unwrap_or_default()
    }
}

/// One agent a client may name.
#[derive(Clone, Debug)]
pub struct Profile {
    /// What a client names: `react`, or a variant's own name.
    pub name: String,
    /// One line for pickers and listings.
    pub description: String,
    pub runs: Runs,
    /// Its own instructions, before `SYSTEM_PROMPT` (a loom `SOUL.md` goes before both).
    pub prompt: Option<String>,
    /// The model it calls, with its provider's key, or why it has none.
    pub model: Model,
    pub temperature: Option<f32>,
    /// `None`: `MAX_ITERATIONS`.
    pub max_iterations: Option<u32>,
}

impl Profile {
    /// Named as one of weft's four (an operator's settings for it included), not a variant.
    pub fn is_builtin(&self) -> bool {
        is_built_in(&self.name)
    }

    /// The engine agent that runs it: one of weft's four, or the engine's remote room.
    pub fn agent(&self) -> Agent {
        match &self.runs {
            Runs::Weft(agent) => agent.clone(),
            Runs::Remote(_) => Agent::Unknown(REMOTE.into()),
        }
    }

    /// Where it runs, when that is elsewhere.
    pub fn remote(&self) -> Option<&Remote> {
        match &self.runs {
            Runs::Remote(remote) => Some(remote),
            Runs::Weft(_) => None,
        }
    }

    /// `base` (the settings every run shares) as this agent runs: its name, model, persona,
    /// temperature and iteration cap. `soul` is a loom `SOUL.md` of the run's working folder.
    pub fn config(&self, base: Config, system_prompt: Option<&str>, soul: Option<&str>) -> Config {
        Config {
            agent: self.name.clone(),
            model: self
                .model
                .config()
                .map(|c| c.model.clone())
                .unwrap_or_default(),
            system_prompt: persona(soul, self.prompt.as_deref(), system_prompt),
            temperature: self.temperature,
            max_iterations: self.max_iterations.unwrap_or(base.max_iterations),
            ..base
        }
    }
}

/// The persona a run starts with, the first that says something of: a loom `SOUL.md` in the
/// run's working folder (the user's own, for that folder), the agent's own prompt (`AGENTS`),
/// `SYSTEM_PROMPT` (every agent's), and the built-in default.
pub fn persona(soul: Option<&str>, prompt: Option<&str>, system_prompt: Option<&str>) -> String {
    [soul, prompt, system_prompt]
        .into_iter()
        .flatten()
        .find(|text| !text.trim().is_empty())
        .unwrap_or(DEFAULT_SYSTEM_PROMPT)
        .to_string()
}

/// Every agent a client may name, the default, and whether the settings could be read.
#[derive(Clone, Debug)]
pub struct Agents {
    /// The built-in four first, then the operator's variants in name order.
    profiles: Vec<Profile>,
    /// `DEFAULT_AGENT`: the agent of a run that names none.
    default: String,
    /// `SYSTEM_PROMPT`.
    system_prompt: Option<String>,
    /// Why `AGENTS` or `DEFAULT_AGENT` cannot be used: every run is refused with it.
    problem: Option<String>,
}

/// Why a run cannot have the agent it asked for, and the error code that says so.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub code: &'static str,
}

/// One entry of `AGENTS`, as written. Unknown fields are refused (a misspelt `promt` would
/// otherwise run the agent without its prompt, silently).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    agent: Option<String>,
    /// A remote agent's: where it is, and the headers of every request to it.
    url: Option<String>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    description: Option<String>,
    prompt: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    temperature: Option<f32>,
    max_iterations: Option<u32>,
}

impl Agents {
    /// Reads `SYSTEM_PROMPT`, `AGENTS` and `DEFAULT_AGENT` through `get`. `model` is the
    /// server's model (`PROVIDER`, `MODEL`, the keys); `provider_model` the model of a provider
    /// an agent names, with that provider's key (`None`: its default model).
    pub fn read(
        get: &dyn Fn(&str) -> Option<String>,
        model: &Model,
        provider_model: &dyn Fn(Provider, Option<String>) -> Model,
    ) -> Agents {
        let mut agents = Agents {
            profiles: Vec::new(),
            default: Agent::React.as_str().into(),
            system_prompt: get("SYSTEM_PROMPT"),
            problem: None,
        };
        let entries = match get("AGENTS").map(|text| parse(&text)).transpose() {
            Ok(entries) => entries.unwrap_or_default(),
            Err(why) => {
                agents.problem = Some(format!("AGENTS: {why}"));
                Vec::new()
            }
        };
        let built_in = BUILT_IN.iter().map(|(agent, description)| {
            let own = entries.iter().find(|(name, _)| name == agent.as_str());
            (agent.as_str(), Some(*description), own.map(|(_, e)| e))
        });
        let variants = entries
            .iter()
            .filter(|(name, _)| !is_built_in(name))
            .map(|(name, e)| (name.as_str(), None, Some(e)));
        let mut built: Vec<Profile> = Vec::new();
        for (name, description, entry) in built_in.chain(variants) {
            let made = match entry.filter(|e| e.url.is_some() || !e.headers.is_empty()) {
                Some(entry) => remote(name, description, entry, model, get),
                None => make(name, description, entry, &built, model, provider_model),
            };
            match made {
                Ok(profile) => built.push(profile),
                Err(why) => {
                    agents.problem.get_or_insert(format!("AGENTS: {why}"));
                }
            }
        }
        agents.profiles = built;
        if let Some(name) = get("DEFAULT_AGENT") {
            if agents.find(&name).is_some() {
                agents.default = name;
            } else {
                agents.problem.get_or_insert(format!(
                    "DEFAULT_AGENT={name} is not an agent: use one of {}",
                    agents.names()
                ));
            }
        }
        agents
    }

    /// Every agent a client may name, with its description: the built-in four, then the
    /// operator's variants. What `/status`, loom's `agent_list` and the demo's picker list.
    pub fn list(&self) -> &[Profile] {
        &self.profiles
    }

    /// The agent of a run that names none (`DEFAULT_AGENT`, else `react`).
    pub fn default_name(&self) -> &str {
        &self.default
    }

    /// `SYSTEM_PROMPT`, the instructions of every agent without its own.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system_prompt.as_deref()
    }

    /// What stops these settings from being used, if anything: a bad `AGENTS` or
    /// `DEFAULT_AGENT`.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The agent named `name`, if there is one.
    pub fn find(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// The agent a run asked for (`None`: the default), or why it cannot run: the settings
    /// are broken, there is no such agent, or its provider has no key.
    pub fn choose(&self, asked: Option<&Agent>) -> Result<&Profile, Refusal> {
        if let Some(problem) = &self.problem {
            return Err(Refusal {
                message: problem.clone(),
                code: "settings_invalid",
            });
        }
        let name = asked.map_or(self.default.as_str(), Agent::as_str);
        let Some(profile) = self.find(name) else {
            return Err(Refusal {
                message: format!("unknown agent: {name} (use one of {})", self.names()),
                code: "agent_unavailable",
            });
        };
        if let (Model::Missing(why), None) = (&profile.model, profile.remote()) {
            return Err(Refusal {
                message: why.clone(),
                code: "model_not_configured",
            });
        }
        Ok(profile)
    }

    /// The names, for error messages: `react, dup, tot, got, support`.
    fn names(&self) -> String {
        let names: Vec<&str> = self.profiles.iter().map(|p| p.name.as_str()).collect();
        names.join(", ")
    }
}

fn is_built_in(name: &str) -> bool {
    BUILT_IN.iter().any(|(agent, _)| agent.as_str() == name)
}

/// `AGENTS` as its entries, in name order; `Err` says what is wrong, naming the entry.
fn parse(text: &str) -> Result<Vec<(String, Entry)>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let serde_json::Value::Object(map) = value else {
        return Err("must be a JSON object of agent name → settings, such as \
                    {\"support\": {\"agent\": \"react\", \"prompt\": \"…\"}}"
            .into());
    };
    let mut entries = Vec::new();
    for (name, value) in map {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            return Err(format!(
                "agent name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.'"
            ));
        }
        let entry: Entry =
            serde_json::from_value(value).map_err(|e| format!("agent \"{name}\": {e}"))?;
        entries.push((name, entry));
    }
    Ok(entries)
}

/// The profile of agent `name`: a built-in with its `description`, the operator's `entry`
/// over it (a built-in's own, or a variant's). A variant takes what it leaves out from its
/// base agent as already made (in `made`), so `"react": {"model": …}` reaches its variants too.
fn make(
    name: &str,
    description: Option<&str>,
    entry: Option<&Entry>,
    made: &[Profile],
    model: &Model,
    provider_model: &dyn Fn(Provider, Option<String>) -> Model,
) -> Result<Profile, String> {
    let base_name = match (entry.and_then(|e| e.agent.as_deref()), description) {
        (Some(base), Some(_)) if base != name => {
            return Err(format!(
                "agent \"{name}\" is a built-in agent and cannot run as \"{base}\": give the \
                 variant its own name"
            ))
        }
        (_, Some(_)) => name,
        (Some(base), None) => base,
        (None, None) => {
            return Err(format!(
                "agent \"{name}\" says no agent to run: add \"agent\": \"react\" (or dup, tot, \
                 got)"
            ))
        }
    };
    // A variant's base is one of the four (as the operator set it up): a variant of a variant
    // would depend on the order entries are read in.
    let base = made
        .iter()
        .find(|p| p.name == base_name && is_built_in(base_name));
    let agent = match (base, description) {
        (Some(base), _) => base.agent(),
        (None, Some(_)) => Agent::from(name),
        (None, None) => {
            return Err(format!(
                "agent \"{name}\": unknown agent \"{base_name}\" (react, dup, tot or got)"
            ))
        }
    };
    let inherited = base.filter(|_| description.is_none());
    let Some(entry) = entry else {
        return Ok(Profile {
            name: name.into(),
            description: description.map_or_else(|| format!("A variant of {agent}"), String::from),
            runs: Runs::Weft(agent),
            prompt: None,
            model: model.clone(),
            temperature: None,
            max_iterations: None,
        });
    };
    let text = |field: &str, value: &Option<String>| match value.as_deref().map(str::trim) {
        Some("") => Err(format!(
            "agent \"{name}\": \"{field}\" is empty (leave it out instead)"
        )),
        other => Ok(other.map(String::from)),
    };
    let prompt = text("prompt", &entry.prompt)?;
    let model_name = text("model", &entry.model)?;
    let description = text("description", &entry.description)?;
    if let Some(t) = entry.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(format!(
                "agent \"{name}\": temperature {t} is outside 0 to 2"
            ));
        }
    }
    if entry.max_iterations == Some(0) {
        return Err(format!(
            "agent \"{name}\": max_iterations must be at least 1"
        ));
    }
    let inherited_model = inherited.map_or(model, |b| &b.model);
    let model = match entry.provider.as_deref() {
        Some(provider) => {
            let Some(p) = Provider::from_name(provider) else {
                let known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
                return Err(format!(
                    "agent \"{name}\": provider \"{provider}\" is not one weft speaks: use one \
                     of {}",
                    known.join(", ")
                ));
            };
            match provider_model(p, model_name) {
                Model::Missing(why) => Model::Missing(format!("AGENTS: agent \"{name}\": {why}")),
                found => found,
            }
        }
        None => match model_name {
            Some(m) => renamed(inherited_model, m),
            None => inherited_model.clone(),
        },
    };
    Ok(Profile {
        name: name.into(),
        description: description
            .or_else(|| built_in_description(name))
            .unwrap_or_else(|| format!("A variant of {agent}")),
        runs: Runs::Weft(agent),
        prompt: prompt.or_else(|| inherited.and_then(|b| b.prompt.clone())),
        model,
        temperature: entry
            .temperature
            .or_else(|| inherited.and_then(|b| b.temperature)),
        max_iterations: entry
            .max_iterations
            .or_else(|| inherited.and_then(|b| b.max_iterations)),
    })
}

/// The profile of remote agent `name`: a `url`, its `headers` (`${secret:NAME}` filled in
/// from the settings), a `description`, and nothing of weft's own agents' settings (which a
/// remote agent would not read: silently ignored, they would mislead).
fn remote(
    name: &str,
    built_in: Option<&str>,
    entry: &Entry,
    model: &Model,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Profile, String> {
    if built_in.is_some() {
        return Err(format!(
            "agent \"{name}\" is a built-in agent and cannot be remote: give the remote agent \
             its own name"
        ));
    }
    let own = [
        ("agent", entry.agent.is_some()),
        ("prompt", entry.prompt.is_some()),
        ("model", entry.model.is_some()),
        ("provider", entry.provider.is_some()),
        ("temperature", entry.temperature.is_some()),
        ("max_iterations", entry.max_iterations.is_some()),
    ];
    if let Some((field, _)) = own.iter().find(|(_, set)| *set) {
        return Err(format!(
            "agent \"{name}\" is remote (it has a url): \"{field}\" is not one of its settings \
             (url, headers, description)"
        ));
    }
    let Some(url) = entry.url.as_deref().map(str::trim) else {
        return Err(format!(
            "agent \"{name}\" has headers but no url: a remote agent needs its url"
        ));
    };
    let host_given = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
    if !host_given {
        return Err(format!(
            "agent \"{name}\": its url must be an http:// or https:// URL with a host (got \
             {url:?})"
        ));
    }
    let mut headers = Vec::new();
    for (header, value) in &entry.headers {
        if header.is_empty()
            || !header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(format!("agent \"{name}\": {header:?} is not a header name"));
        }
        let value = fill_secrets(value, get)
            .map_err(|why| format!("agent \"{name}\": header {header}: {why}"))?;
        if value.contains(['\r', '\n']) {
            return Err(format!(
                "agent \"{name}\": header {header}: a value cannot span lines"
            ));
        }
        headers.push((header.clone(), value));
    }
    let description = match entry.description.as_deref().map(str::trim) {
        Some("") => {
            return Err(format!(
                "agent \"{name}\": \"description\" is empty (leave it out instead)"
            ))
        }
        Some(d) => d.to_string(),
        None => "An AG-UI agent weft calls".into(),
    };
    Ok(Profile {
        name: name.into(),
        description,
        runs: Runs::Remote(Remote {
            url: url.into(),
            headers,
        }),
        prompt: None,
        // Not called: the server's, so a remote agent is never refused for a key it needs not.
        model: model.clone(),
        temperature: None,
        max_iterations: None,
    })
}

/// `model` calling the model named `name` instead, through the same provider and key.
fn renamed(model: &Model, name: String) -> Model {
    let mut model = model.clone();
    if let Model::Api(c) | Model::Scripted(c) | Model::Binding(c) = &mut model {
        c.model = name;
    }
    model
}

fn built_in_description(name: &str) -> Option<String> {
    BUILT_IN
        .iter()
        .find(|(agent, _)| agent.as_str() == name)
        .map(|(_, d)| (*d).to_string())
}

/// What the rest of the Worker asks of the settings about agents (kept here, beside the rules).
impl Settings {
    /// The model a run of agent `name` calls (its `Config::agent`), with its key. A run from
    /// before agents had names calls the server's model; an agent the settings no longer have
    /// (removed while its run waited) is an error its next model call fails with.
    pub fn model_for(&self, name: &str) -> Model {
        if name.is_empty() {
            return self.model.clone();
        }
        match self.agents.find(name) {
            Some(profile) => profile.model.clone(),
            None => Model::Missing(format!(
                "this run's agent \"{name}\" is no longer configured (AGENTS): start a new run"
            )),
        }
    }

    /// What stops runs, said once each: the server's model, a bad `AGENTS` or
    /// `DEFAULT_AGENT`, an agent whose provider has no key.
    pub fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = Vec::new();
        let mut add = |why: &str| {
            if !problems.iter().any(|p| p == why) {
                problems.push(why.into());
            }
        };
        if let Model::Missing(why) = &self.model {
            add(why);
        }
        if let Some(why) = self.agents.problem() {
            add(why);
        }
        for profile in self.agents.list().iter().filter(|p| p.remote().is_none()) {
            if let Model::Missing(why) = &profile.model {
                add(why);
            }
        }
        problems
    }

    /// Logs [`Settings::problems`] the first time this isolate reads its settings: a Worker
    /// has no start-up of its own to fail, so this is the line `wrangler dev` and `wrangler
    /// tail` show when it starts (and `/status` lists them after).
    pub fn log_problems_once(&self) {
        thread_local! {
            static LOGGED: Cell<bool> = const { Cell::new(false) };
        }
        if LOGGED.with(|logged| logged.replace(true)) {
            return;
        }
        for problem in self.problems() {
            worker::console_error!("weft: settings: {problem}");
        }
    }
}

#[cfg(test)]
mod tests;

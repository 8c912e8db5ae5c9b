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
mod tests {
    use std::collections::HashMap;

    use weft_agent::provider::ProviderConfig;

    use super::*;

    /// The server's model in these tests: OpenAI with a key, `gpt-4o-mini`.
    fn server_model() -> Model {
        Model::Api(ProviderConfig::new(
            Provider::OpenAi,
            "sk-openai",
            "gpt-4o-mini",
        ))
    }

    /// `Agents` read from these settings, with only the keys among them set.
    fn read(settings: &[(&str, &str)]) -> Agents {
        let env: HashMap<String, String> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let get = |name: &str| env.get(name).cloned();
        Agents::read(&get, &server_model(), &|provider, model| {
            crate::settings::provider_model(&get, false, provider, model)
        })
    }

    fn agents(json: &str) -> Agents {
        read(&[("AGENTS", json)])
    }

    fn problem(json: &str) -> String {
        let agents = agents(json);
        let problem = agents.problem().map(String::from);
        // A broken setting refuses every run with its reason, the built-in agents included.
        let refusal = agents.choose(Some(&Agent::React)).unwrap_err();
        assert_eq!(refusal.code, "settings_invalid");
        assert_eq!(Some(&refusal.message), problem.as_ref());
        problem.unwrap_or_default()
    }

    fn model_of(profile: &Profile) -> (&str, &str) {
        let c = profile.model.config().expect("a model");
        (c.provider.as_str(), c.model.as_str())
    }

    #[test]
    fn the_persona_is_soul_then_the_agents_prompt_then_system_prompt_then_the_default() {
        let all = persona(Some("Soul."), Some("Agent."), Some("System."));
        assert_eq!(all, "Soul.");
        assert_eq!(persona(None, Some("Agent."), Some("System.")), "Agent.");
        assert_eq!(persona(None, None, Some("System.")), "System.");
        assert_eq!(persona(None, None, None), DEFAULT_SYSTEM_PROMPT);
        // Blank text says nothing: the next one speaks.
        assert_eq!(persona(Some("  \n"), Some("Agent."), None), "Agent.");
        assert_eq!(persona(Some(""), Some(" "), Some("System.")), "System.");
    }

    #[test]
    fn a_runs_config_follows_the_precedence_through_the_settings() {
        let agents = read(&[
            ("SYSTEM_PROMPT", "Line one.\nLine two."),
            (
                "AGENTS",
                r#"{"support": {"agent": "react", "prompt": "You are Support."}}"#,
            ),
        ]);
        let support = agents.find("support").unwrap();
        let react = agents.find("react").unwrap();
        let system = agents.system_prompt();
        let base = Config::default;
        let soul = Some("You are a pirate.");
        assert_eq!(
            support.config(base(), system, soul).system_prompt,
            "You are a pirate."
        );
        assert_eq!(
            support.config(base(), system, None).system_prompt,
            "You are Support."
        );
        assert_eq!(
            react.config(base(), system, None).system_prompt,
            "Line one.\nLine two."
        );
        let plain = read(&[]);
        let react = plain.find("react").unwrap();
        assert_eq!(
            react
                .config(base(), plain.system_prompt(), None)
                .system_prompt,
            DEFAULT_SYSTEM_PROMPT
        );
    }

    #[test]
    fn no_settings_are_the_four_agents_on_the_servers_model() {
        let agents = read(&[]);
        let names: Vec<&str> = agents.list().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["react", "dup", "tot", "got"]);
        assert_eq!(agents.default_name(), "react");
        assert_eq!(agents.problem(), None);
        for profile in agents.list() {
            assert_eq!(model_of(profile), ("openai", "gpt-4o-mini"));
            assert!(!profile.description.is_empty());
            assert_eq!(profile.agent().as_str(), profile.name);
        }
        let config = agents
            .choose(None)
            .unwrap()
            .config(Config::default(), None, None);
        assert_eq!(config.agent, "react");
        assert_eq!(config.model, "gpt-4o-mini");
        assert_eq!(config.temperature, None);
        assert_eq!(config.max_iterations, 10);
    }

    #[test]
    fn a_variant_runs_its_agent_with_its_own_settings_and_is_listed_after_the_four() {
        let agents = agents(
            r#"{
                "support": {"agent": "dup", "description": "Our support desk", "prompt": "You are Support.",
                            "model": "gpt-4.1", "temperature": 0.2, "max_iterations": 4},
                "brief": {"agent": "react"}
            }"#,
        );
        let names: Vec<&str> = agents.list().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["react", "dup", "tot", "got", "brief", "support"]);
        let support = agents
            .choose(Some(&Agent::Unknown("support".into())))
            .unwrap();
        assert_eq!(support.agent(), Agent::Dup);
        assert_eq!(support.description, "Our support desk");
        assert_eq!(model_of(support), ("openai", "gpt-4.1"));
        let config = support.config(Config::default(), None, None);
        assert_eq!(config.agent, "support");
        assert_eq!(config.model, "gpt-4.1");
        assert_eq!(config.system_prompt, "You are Support.");
        assert_eq!(config.temperature, Some(0.2));
        assert_eq!(config.max_iterations, 4);
        let brief = agents.find("brief").unwrap();
        assert_eq!(brief.description, "A variant of react");
        assert_eq!(model_of(brief), ("openai", "gpt-4o-mini"));
        // The built-in agent itself is untouched by its variants.
        let dup = agents
            .find("dup")
            .unwrap()
            .config(Config::default(), None, None);
        assert_eq!((dup.model.as_str(), dup.temperature), ("gpt-4o-mini", None));
    }

    #[test]
    fn a_built_in_agents_own_entry_reaches_its_variants() {
        let agents = agents(
            r#"{"react": {"model": "gpt-4.1", "prompt": "Be brief.", "temperature": 0.5},
                "support": {"agent": "react", "prompt": "You are Support."}}"#,
        );
        let react = agents.find("react").unwrap();
        assert_eq!(model_of(react), ("openai", "gpt-4.1"));
        assert_eq!(react.prompt.as_deref(), Some("Be brief."));
        let support = agents.find("support").unwrap();
        assert_eq!(model_of(support), ("openai", "gpt-4.1"));
        assert_eq!(support.prompt.as_deref(), Some("You are Support."));
        assert_eq!(support.temperature, Some(0.5));
    }

    #[test]
    fn a_provider_an_agent_names_uses_that_providers_key() {
        let agents = read(&[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            (
                "AGENTS",
                r#"{"fr": {"agent": "react", "provider": "anthropic", "model": "claude-sonnet-4-5"},
                    "gem": {"agent": "tot", "provider": "gemini"}}"#,
            ),
        ]);
        let fr = agents.choose(Some(&Agent::from("fr"))).unwrap();
        let c = fr.model.config().unwrap();
        assert_eq!(c.provider, Provider::Anthropic);
        assert_eq!(c.model, "claude-sonnet-4-5");
        assert_eq!(c.api_key, "sk-ant");
        // The others keep the server's model and key.
        assert_eq!(
            agents
                .find("react")
                .unwrap()
                .model
                .config()
                .unwrap()
                .api_key,
            "sk-openai"
        );
        // A provider without its key: that agent is refused with the key to set; the setting
        // stands, and every other agent runs.
        assert_eq!(agents.problem(), None);
        let refusal = agents.choose(Some(&Agent::from("gem"))).unwrap_err();
        assert_eq!(refusal.code, "model_not_configured");
        assert!(
            refusal
                .message
                .starts_with("AGENTS: agent \"gem\": provider gemini needs GEMINI_API_KEY"),
            "{}",
            refusal.message
        );
        assert!(agents.choose(Some(&Agent::React)).is_ok());
    }

    #[test]
    fn default_agent_is_what_a_run_naming_none_gets() {
        let json = r#"{"support": {"agent": "react", "prompt": "You are Support."}}"#;
        let agents = read(&[("AGENTS", json), ("DEFAULT_AGENT", "support")]);
        assert_eq!(agents.default_name(), "support");
        assert_eq!(agents.choose(None).unwrap().name, "support");
        // Naming react still gets react.
        assert_eq!(agents.choose(Some(&Agent::React)).unwrap().name, "react");
        let unknown = read(&[("AGENTS", json), ("DEFAULT_AGENT", "suport")]);
        assert_eq!(
            unknown.problem(),
            Some("DEFAULT_AGENT=suport is not an agent: use one of react, dup, tot, got, support")
        );
        assert_eq!(unknown.choose(None).unwrap_err().code, "settings_invalid");
    }

    #[test]
    fn an_unknown_agent_is_refused_with_the_names_there_are() {
        let agents = agents(r#"{"support": {"agent": "react"}}"#);
        let refusal = agents.choose(Some(&Agent::from("sales"))).unwrap_err();
        assert_eq!(
            refusal,
            Refusal {
                message: "unknown agent: sales (use one of react, dup, tot, got, support)".into(),
                code: "agent_unavailable",
            }
        );
    }

    #[test]
    fn a_broken_agents_setting_is_refused_with_its_reason() {
        let cases = [
            (
                r#"{"support": {"agent": "react""#,
                "AGENTS: not JSON (EOF while parsing",
            ),
            (
                r#"["react"]"#,
                "AGENTS: must be a JSON object of agent name → settings",
            ),
            (
                r#"{"support": {"agent": "react", "promt": "x"}}"#,
                "AGENTS: agent \"support\": unknown field `promt`, expected one of `agent`, \
                 `url`, `headers`, `description`, `prompt`, `model`, `provider`, `temperature`, `max_iterations`",
            ),
            (
                r#"{"support": {"agent": "reac"}}"#,
                "AGENTS: agent \"support\": unknown agent \"reac\" (react, dup, tot or got)",
            ),
            (
                r#"{"support": {"agent": "helper"}, "helper": {"agent": "react"}}"#,
                "AGENTS: agent \"support\": unknown agent \"helper\" (react, dup, tot or got)",
            ),
            (
                r#"{"support": {"prompt": "x"}}"#,
                "AGENTS: agent \"support\" says no agent to run: add \"agent\": \"react\"",
            ),
            (
                r#"{"react": {"agent": "tot"}}"#,
                "AGENTS: agent \"react\" is a built-in agent and cannot run as \"tot\"",
            ),
            (
                r#"{"support": {"agent": "react", "provider": "mistral"}}"#,
                "AGENTS: agent \"support\": provider \"mistral\" is not one weft speaks: use \
                 one of openai, openai-responses, anthropic, gemini, workers-ai",
            ),
            (
                r#"{"support": {"agent": "react", "temperature": 3}}"#,
                "AGENTS: agent \"support\": temperature 3 is outside 0 to 2",
            ),
            (
                r#"{"support": {"agent": "react", "temperature": "warm"}}"#,
                "AGENTS: agent \"support\": invalid type: string \"warm\", expected f32",
            ),
            (
                r#"{"support": {"agent": "react", "max_iterations": 0}}"#,
                "AGENTS: agent \"support\": max_iterations must be at least 1",
            ),
            (
                r#"{"support": {"agent": "react", "max_iterations": -1}}"#,
                "AGENTS: agent \"support\": invalid value: integer `-1`, expected u32",
            ),
            (
                r#"{"support": {"agent": "react", "prompt": "  "}}"#,
                "AGENTS: agent \"support\": \"prompt\" is empty (leave it out instead)",
            ),
            (
                r#"{"our support": {"agent": "react"}}"#,
                "AGENTS: agent name \"our support\": use 1 to 64 letters, digits",
            ),
        ];
        for (json, expected) in cases {
            let problem = problem(json);
            assert!(
                problem.starts_with(expected),
                "{json}\n  got: {problem}\n  want: {expected}"
            );
        }
    }

    #[test]
    fn a_remote_agent_is_an_entry_with_a_url_its_header_secrets_filled_and_never_shown() {
        let agents = read(&[
            (
                "AGENTS",
                r#"{"research": {"url": "https://agents.example.com/agui?key=k",
                    "headers": {"Authorization": "Bearer ${secret:RESEARCH_TOKEN}"},
                    "description": "Our LangGraph agent"}}"#,
            ),
            ("RESEARCH_TOKEN", "tok-123"),
            ("DEFAULT_AGENT", "research"),
        ]);
        assert_eq!(agents.problem(), None);
        let research = agents
            .choose(None)
            .expect("the default is the remote agent");
        assert_eq!(research.name, "research");
        assert_eq!(research.description, "Our LangGraph agent");
        assert_eq!(research.agent().as_str(), REMOTE);
        assert!(!research.is_builtin());
        let remote = research.remote().expect("remote");
        assert_eq!(
            remote.headers,
            vec![("Authorization".to_string(), "Bearer tok-123".to_string())]
        );
        assert_eq!(remote.host(), "agents.example.com");
        assert!(!format!("{research:?}").contains("tok-123"));
        // A remote agent needs no model key.
        let keyless = Agents::read(
            &|name: &str| {
                (name == "AGENTS").then(|| r#"{"r": {"url": "http://127.0.0.1:9/"}}"#.into())
            },
            &Model::Missing("no key".into()),
            &|_, _| Model::Missing("no key".into()),
        );
        assert!(keyless.choose(Some(&Agent::from("r"))).is_ok());
        assert!(keyless.choose(None).is_err());
    }

    #[test]
    fn a_remote_entry_that_cannot_be_used_is_refused_with_its_reason() {
        for (json, why) in [
            (r#"{"r": {"url": "ftp://x"}}"#, "http:// or https://"),
            (r#"{"r": {"url": "https://"}}"#, "with a host"),
            (r#"{"r": {"headers": {"A": "b"}}}"#, "no url"),
            (
                r#"{"r": {"url": "https://x", "prompt": "p"}}"#,
                "\"prompt\" is not one",
            ),
            (
                r#"{"r": {"url": "https://x", "agent": "react"}}"#,
                "\"agent\" is not one",
            ),
            (r#"{"react": {"url": "https://x"}}"#, "cannot be remote"),
            (
                r#"{"r": {"url": "https://x", "headers": {"A": "${secret:NOPE}"}}}"#,
                "NOPE is not set",
            ),
            (
                r#"{"r": {"url": "https://x", "headers": {"A b": "c"}}}"#,
                "not a header name",
            ),
            (
                r#"{"r": {"url": "https://x", "headrs": {}}}"#,
                "unknown field",
            ),
        ] {
            let p = problem(json);
            assert!(p.contains(why), "{json}: {p}");
        }
    }
}

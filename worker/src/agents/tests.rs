//! Reading `AGENTS`, `SYSTEM_PROMPT` and `DEFAULT_AGENT` into [`Agents`] (kept apart from the
//! reader, which is over half the file's length without them).

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
        &|name: &str| (name == "AGENTS").then(|| r#"{"r": {"url": "http://127.0.0.1:9/"}}"#.into()),
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

//! What an operator's agent settings (the worker's `AGENTS`) reach the engine as: the run's
//! [`Config`]. Its model, persona and temperature go into every model call of every agent, and
//! the whole config survives a checkpoint, so a restored run calls the same model the same way.

use super::*;

fn operator_config() -> Config {
    Config {
        agent: "support".into(),
        model: "support-model".into(),
        system_prompt: "You are Support.".into(),
        temperature: Some(0.25),
        ..Config::default()
    }
}

#[test]
fn every_model_call_carries_the_agents_model_persona_and_temperature() {
    let mut run = started(
        operator_config(),
        tools(false),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.requests.len(), 2, "think, act, think");
    for request in &host.requests {
        assert_eq!(request.model, "support-model");
        assert_eq!(request.system.as_deref(), Some("You are Support."));
        assert_eq!(request.temperature, Some(0.25));
    }
}

#[test]
fn each_agents_first_call_starts_with_the_persona_at_the_temperature() {
    for agent in [Agent::Dup, Agent::Tot, Agent::Got] {
        let mut run = started(
            operator_config(),
            tools(false),
            Session::default(),
            &Start {
                agent: agent.clone(),
                ..start("Weather in SF?")
            },
        );
        let request = std::iter::from_fn(|| run.poll())
            .find_map(|out| match out {
                Output::Effect(Effect::CallLlm { request, .. }) => Some(request),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{agent}: no model call"));
        let system = request.system.unwrap_or_default();
        assert!(
            system.starts_with("You are Support.\n\n"),
            "{agent}: {system}"
        );
        assert_eq!(request.temperature, Some(0.25), "{agent}");
        assert_eq!(request.model, "support-model", "{agent}");
    }
}

#[test]
fn no_temperature_leaves_the_providers_default() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("hi"),
    );
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.requests[0].temperature, None);
    assert_eq!(
        host.requests[0].system.as_deref(),
        Some(weft_agent::engine::DEFAULT_SYSTEM_PROMPT)
    );
}

#[test]
fn a_restored_run_keeps_the_agent_it_was_asked_for() {
    let run = started(
        operator_config(),
        tools(false),
        Session::default(),
        &start("hi"),
    );
    let restored = Run::restore(&run.checkpoint().unwrap()).unwrap();
    assert_eq!(restored.config(), &operator_config());
    assert_eq!(restored.config().agent, "support");
}

//! Whole conversations through the engine, on recorded provider streams: the exact event
//! sequence of each, the requests the model gets, the history the session keeps, and a run
//! checkpointed mid-way and restored.

use std::collections::VecDeque;

use serde_json::json;
use weft_agent::engine::{
    Config, Effect, Input, Output, Run, Session, Start, ToolInfo, MAX_TOOL_RESULT_BYTES,
};
use weft_agent::provider::{ChatMessage, ChatRequest, Provider, StreamDecoder, ToolDef};
use weft_protocol::command::ApprovalDecision;
use weft_protocol::{Agent, Event, Review, Sequenced};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers/");

fn fixture(path: &str) -> (Provider, Vec<u8>) {
    let provider = if path.starts_with("anthropic") {
        Provider::Anthropic
    } else if path.starts_with("gemini") {
        Provider::Gemini
    } else {
        Provider::OpenAi
    };
    (
        provider,
        std::fs::read(format!("{FIXTURES}{path}")).unwrap(),
    )
}

/// A plain reply ("Hello! How can I help you today?"-style) with usage.
const TEXT: &str = "openai/chat-text-usage.gpt-4o.sse";
/// One `get_weather` call.
const ONE_TOOL: &str = "anthropic/tool_use_response.txt";
/// Parallel calls.
const PARALLEL: &str = "openai/chat-parallel-tool-calls.gpt-4o.sse";
/// Reasoning, then an error mid-stream.
const MIDSTREAM_ERROR: &str = "openai-compatible/openrouter-reasoning-midstream-error.sse";

fn tool(name: &str, needs_approval: bool) -> ToolInfo {
    ToolInfo {
        def: ToolDef {
            name: name.into(),
            description: format!("the {name} tool"),
            input_schema: json!({"type": "object"}),
        },
        needs_approval,
        client: false,
    }
}

fn tools(approval: bool) -> Vec<ToolInfo> {
    vec![
        tool("get_weather", approval),
        tool("GetWeatherArgs", false),
        tool("get_stock_price", false),
    ]
}

/// A run built and started: what every test does first.
fn started(config: Config, tools: Vec<ToolInfo>, session: Session, start: &Start) -> Run {
    let mut run = Run::new(config, tools, session, start);
    run.start();
    run
}

fn start(message: &str) -> Start {
    Start {
        run_id: "run-1".into(),
        session_id: "sess-1".into(),
        message: message.into(),
        agent: Agent::React,
        thread_id: None,
        verbose: false,
        working_folder: None,
        got_adaptive: false,
    }
}

/// Plays the host: answers effects from scripted streams, tool results and decisions.
#[derive(Default)]
struct Host {
    streams: VecDeque<&'static str>,
    /// Bytes of a stream to deliver before cancelling (for the cancel test).
    cut_after: Option<usize>,
    approvals: VecDeque<ApprovalDecision>,
    /// Tool results are handed back in reverse order, to show parallel calls are independent.
    reverse_results: bool,
    events: Vec<Sequenced>,
    requests: Vec<ChatRequest>,
    tools_run: Vec<String>,
    checkpoints: usize,
    finished: bool,
    /// When set, every tool answers with this many bytes.
    result_bytes: Option<usize>,
}

impl Host {
    fn kinds(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.event.kind()).collect()
    }

    /// Runs until the run finishes, or waits for an approval nobody scripted.
    fn drive(&mut self, run: &mut Run) {
        let mut tools: Vec<(String, String)> = Vec::new();
        let mut awaiting = false;
        loop {
            match run.poll() {
                Some(Output::Event(e)) => self.events.push(e),
                Some(Output::Effect(effect)) => match effect {
                    Effect::CallLlm { call, request } => {
                        self.requests.push(request);
                        let path = self
                            .streams
                            .pop_front()
                            .expect("an LLM stream for this call");
                        let (provider, body) = fixture(path);
                        let mut d = StreamDecoder::new(provider);
                        let body = match self.cut_after.take() {
                            Some(n) => {
                                let _ = d.push(&body[..n]);
                                while let Some(delta) = d.poll() {
                                    run.handle(Input::Llm { call, delta }).unwrap();
                                }
                                run.handle(Input::Cancel).unwrap();
                                continue;
                            }
                            None => body,
                        };
                        let pushed = d.push(&body);
                        while let Some(delta) = d.poll() {
                            if run.is_finished() {
                                break;
                            }
                            run.handle(Input::Llm { call, delta }).unwrap();
                        }
                        if run.is_finished() {
                            continue;
                        }
                        match pushed.and_then(|()| d.finish()) {
                            Ok(()) => run.handle(Input::LlmEnd { call }).unwrap(),
                            Err(error) => run.handle(Input::LlmFailed { call, error }).unwrap(),
                        }
                    }
                    Effect::RunTool {
                        call_id,
                        name,
                        arguments,
                        ..
                    } => {
                        self.tools_run.push(name.clone());
                        let result = match self.result_bytes {
                            Some(n) => "x".repeat(n),
                            None => format!("{name} says ok to {arguments}"),
                        };
                        tools.push((call_id, result));
                    }
                    Effect::AwaitApproval { .. } => awaiting = true,
                    Effect::Checkpoint => self.checkpoints += 1,
                    Effect::Finished => self.finished = true,
                },
                None => {
                    if !tools.is_empty() {
                        if self.reverse_results {
                            tools.reverse();
                        }
                        for (call_id, result) in tools.drain(..) {
                            run.handle(Input::ToolResult {
                                call_id,
                                result,
                                is_error: false,
                            })
                            .unwrap();
                        }
                    } else if awaiting {
                        awaiting = false;
                        match self.approvals.pop_front() {
                            Some(d) => run.handle(Input::Approval(d)).unwrap(),
                            None => return,
                        }
                    } else {
                        return;
                    }
                }
            }
        }
    }
}

fn decision(review: Review, message: Option<&str>) -> ApprovalDecision {
    ApprovalDecision {
        call_id: None,
        review,
        custom_deny_message: message.map(String::from),
        explanation: None,
    }
}

fn reply_of(host: &Host) -> String {
    match &host.events.last().unwrap().event {
        Event::RunEnd { reply, .. } => reply.clone(),
        other => panic!("run did not end with run_end: {other:?}"),
    }
}

fn collapse(kinds: Vec<&str>) -> Vec<&str> {
    // Runs of chunks become one entry: their count depends on the recording, not the engine.
    let mut out: Vec<&str> = Vec::new();
    for k in kinds {
        if matches!(k, "message_chunk" | "reasoning_chunk" | "tool_call_chunk")
            && out.last() == Some(&k)
        {
            continue;
        }
        out.push(k);
    }
    out
}

#[test]
fn plain_reply() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Hi"),
    );
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds()),
        [
            "run_start",
            "node_enter",
            "message_chunk",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "run_end"
        ]
    );
    assert!(host.finished);
    let text: String = host
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::MessageChunk { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert!(!text.is_empty());
    assert_eq!(reply_of(&host), text);
    // event ids are dense from 1, node ids follow the spans.
    for (i, e) in host.events.iter().enumerate() {
        assert_eq!(e.envelope.event_id, Some(i as u64 + 1));
        assert_eq!(e.envelope.run_id.as_deref(), Some("run-1"));
    }
    assert_eq!(
        host.events[1].envelope.node_id.as_deref(),
        Some("run-think-0")
    );
    // The session keeps the exchange.
    let history = &run.session().history;
    assert_eq!(history.len(), 2);
    assert_eq!(history[0], ChatMessage::user("Hi"));
    assert!(matches!(&history[1], ChatMessage::Assistant { content, .. } if content == &text));
    // The request carried the system prompt, the message and the tools.
    let req = &host.requests[0];
    assert_eq!(req.messages, vec![ChatMessage::user("Hi")]);
    assert_eq!(req.tools.len(), 3);
    assert!(req.system.is_some());
}

#[test]
fn one_tool_then_the_reply() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds()),
        [
            "run_start",
            "node_enter",
            "message_chunk",
            "tool_call_chunk",
            "tool_call",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "node_enter",
            "tool_start",
            "tool_end",
            "node_exit",
            "node_enter",
            "message_chunk",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "run_end",
        ]
    );
    assert_eq!(host.tools_run, ["get_weather"]);
    // The second model call sees the call and its result.
    let second = &host.requests[1].messages;
    assert!(
        matches!(&second[1], ChatMessage::Assistant { tool_calls, .. } if tool_calls[0].name == "get_weather")
    );
    assert!(
        matches!(&second[2], ChatMessage::Tool(r) if r.name == "get_weather" && r.content.starts_with("get_weather says ok"))
    );
    let Event::RunEnd {
        total_usage,
        usage,
        iteration_count,
        ..
    } = &host.events.last().unwrap().event
    else {
        panic!()
    };
    assert!(total_usage.unwrap().total_tokens > usage.unwrap().total_tokens);
    assert_eq!(*iteration_count, Some(2));
}

#[test]
fn parallel_tools_run_together_and_answer_in_call_order() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Weather and stocks"),
    );
    let mut host = Host {
        streams: [PARALLEL, TEXT].into(),
        reverse_results: true,
        ..Host::default()
    };
    host.drive(&mut run);
    let starts = host.kinds().iter().filter(|k| **k == "tool_start").count();
    assert!(starts >= 2, "parallel fixture has several calls");
    // Every tool_start comes before the first tool_end: they were all started at once.
    let kinds = host.kinds();
    let first_end = kinds.iter().position(|k| *k == "tool_end").unwrap();
    assert_eq!(
        kinds[..first_end]
            .iter()
            .filter(|k| **k == "tool_start")
            .count(),
        starts
    );
    // The history lists results in the order of the calls, whatever order they finished in.
    let second = &host.requests[1].messages;
    let ChatMessage::Assistant { tool_calls, .. } = &second[1] else {
        panic!()
    };
    let result_ids: Vec<&str> = second[2..]
        .iter()
        .map(|m| match m {
            ChatMessage::Tool(r) => r.call_id.as_str(),
            _ => panic!("expected tool results"),
        })
        .collect();
    let call_ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(result_ids, call_ids);
    assert!(host.finished);
}

fn approval_run(reviews: Vec<ApprovalDecision>, streams: Vec<&'static str>) -> (Run, Host) {
    let mut run = started(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: streams.into(),
        approvals: reviews.into(),
        ..Host::default()
    };
    host.drive(&mut run);
    (run, host)
}

#[test]
fn approval_yes_runs_the_tool() {
    let (_, host) = approval_run(vec![decision(Review::Yes, None)], vec![ONE_TOOL, TEXT]);
    let kinds = collapse(host.kinds());
    let act = kinds.iter().position(|k| *k == "tool_approval").unwrap();
    assert_eq!(
        kinds[act - 1..act + 5],
        [
            "node_enter",
            "tool_approval",
            "approval_resolved",
            "tool_start",
            "tool_end",
            "node_exit"
        ]
    );
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(*kinds.last().unwrap(), "run_end");
}

#[test]
fn approval_no_continue_tells_the_model_and_goes_on() {
    let (run, host) = approval_run(
        vec![decision(Review::NoContinue, Some("not today"))],
        vec![ONE_TOOL, TEXT],
    );
    assert!(host.tools_run.is_empty());
    let end = host.events.iter().find_map(|e| match &e.event {
        Event::ToolEnd {
            result, is_error, ..
        } => Some((result.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(end, Some(("denied by the user: not today".into(), true)));
    assert_eq!(host.requests.len(), 2, "the model is asked again");
    assert!(
        matches!(&run.session().history[2], ChatMessage::Tool(r) if r.is_error && r.content.contains("not today"))
    );
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
}

#[test]
fn approval_no_exit_stops_the_run() {
    let (run, host) = approval_run(vec![decision(Review::NoExit, None)], vec![ONE_TOOL]);
    assert!(host.tools_run.is_empty());
    assert_eq!(host.requests.len(), 1, "the model is not asked again");
    assert_eq!(
        collapse(host.kinds())[9..],
        [
            "node_enter",
            "tool_approval",
            "approval_resolved",
            "tool_end",
            "node_exit",
            "run_end"
        ]
    );
    assert!(run.is_finished());
}

#[test]
fn approval_always_is_remembered_for_the_session() {
    let (run, host) = approval_run(vec![decision(Review::Always, None)], vec![ONE_TOOL, TEXT]);
    assert_eq!(host.tools_run, ["get_weather"]);
    assert!(run.session().always_allowed.contains("get_weather"));
    // The next run of the session runs it without asking.
    let mut next = Run::new(
        Config::default(),
        tools(true),
        run.session().clone(),
        &start("Again?"),
    );
    next.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut next);
    assert!(!host.kinds().contains(&"tool_approval"));
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(next.session().iterations, 4);
}

#[test]
fn approval_explain_streams_an_explanation_then_asks_again() {
    let (_, host) = approval_run(
        vec![decision(Review::Explain, None), decision(Review::Yes, None)],
        vec![ONE_TOOL, TEXT, TEXT],
    );
    let kinds = collapse(host.kinds());
    let first = kinds.iter().position(|k| *k == "tool_approval").unwrap();
    assert_eq!(
        kinds[first..first + 8],
        [
            "tool_approval",
            "approval_resolved",
            "message_chunk",
            "usage",
            "llm_complete",
            "tool_approval",
            "approval_resolved",
            "tool_start"
        ]
    );
    let explain_chunk = host
        .events
        .iter()
        .find(|e| matches!(&e.event, Event::MessageChunk { id, .. } if id == "explain"));
    assert!(
        explain_chunk.is_some(),
        "the explanation is streamed from the explain node"
    );
    // The explanation request asks about the pending call and offers no tools.
    let req = &host.requests[1];
    assert!(req.tools.is_empty());
    assert!(
        matches!(req.messages.last(), Some(ChatMessage::User { content }) if content.contains("get_weather"))
    );
    assert_eq!(host.tools_run, ["get_weather"]);
}

#[test]
fn threshold_compaction_summarises_older_turns_first() {
    let mut session = Session::default();
    for i in 0..6 {
        session.history.push(ChatMessage::user(format!(
            "question {i}: {}",
            "lorem ipsum ".repeat(40)
        )));
        session
            .history
            .push(ChatMessage::assistant(format!("answer {i}")));
    }
    let config = Config {
        context_window: 1000,
        ..Config::default()
    };
    let mut run = started(config, tools(false), session, &start("And now?"));
    let mut host = Host {
        streams: [TEXT, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds())[..3],
        ["run_start", "context_compacted", "node_enter"]
    );
    let Event::ContextCompacted {
        old_token_count,
        new_token_count,
        strategy,
        ..
    } = &host.events[1].event
    else {
        panic!()
    };
    assert!(new_token_count < old_token_count);
    assert_eq!(strategy, "ThresholdContextManager");
    // The summary request offered no tools; the summary stays in the history, the recent turns too.
    assert!(host.requests[0].tools.is_empty());
    let history = &run.session().history;
    assert!(
        matches!(&history[0], ChatMessage::User { content } if content.starts_with("Summary of the earlier conversation:"))
    );
    assert_eq!(history[history.len() - 2], ChatMessage::user("And now?"));
    assert!(history.len() <= 7);
}

#[test]
fn manual_compaction_and_the_empty_transcript() {
    let mut empty = Run::compact(
        Config::default(),
        tools(false),
        Session::default(),
        "sess-1",
        "compact-1",
    );
    let mut host = Host::default();
    host.drive(&mut empty);
    assert_eq!(host.kinds(), ["error"]);
    assert!(
        matches!(&host.events[0].event, Event::Error { message, .. } if message == "Cannot compact empty transcript")
    );

    let session = Session {
        history: vec![ChatMessage::user("hi"), ChatMessage::assistant("hello")],
        ..Session::default()
    };
    let mut run = Run::compact(
        Config::default(),
        tools(false),
        session,
        "sess-1",
        "compact-2",
    );
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.kinds(), ["context_compacted"]);
    assert_eq!(run.session().history.len(), 1);
    assert!(host.finished);
}

#[test]
fn cancel_mid_stream_keeps_what_was_said() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Hi"),
    );
    let body = fixture(TEXT).1;
    let mut host = Host {
        streams: [TEXT].into(),
        cut_after: Some(body.len() / 2),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    assert_eq!(kinds[kinds.len() - 2..], ["llm_complete", "error"]);
    let Event::Error { message, code, .. } = &host.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(
        (message.as_str(), code.as_deref()),
        ("cancelled", Some("cancelled"))
    );
    assert!(
        matches!(&host.events[host.events.len() - 2].event, Event::LlmComplete { finish_reason, content, .. }
        if finish_reason.as_str() == "cancelled" && !content.is_empty())
    );
    assert!(run.is_finished());
    assert_eq!(
        run.handle(Input::Cancel),
        Err(weft_agent::engine::EngineError::Finished)
    );
}

#[test]
fn iteration_cap_ends_the_run_with_a_reply_not_an_error() {
    let config = Config {
        max_iterations: 1,
        ..Config::default()
    };
    let mut run = started(config, tools(false), Session::default(), &start("Weather?"));
    let mut host = Host {
        streams: [ONE_TOOL].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.requests.len(), 1);
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
    assert_eq!(host.tools_run, ["get_weather"]);
}

#[test]
fn provider_error_mid_stream_fails_the_run_clearly() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Think hard"),
    );
    let mut host = Host {
        streams: [MIDSTREAM_ERROR].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    assert_eq!(kinds[..3], ["run_start", "node_enter", "reasoning_chunk"]);
    assert_eq!(*kinds.last().unwrap(), "error");
    let Event::Error { message, code, .. } = &host.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("provider"));
    assert!(!message.is_empty());
    assert!(host.finished);
}

#[test]
fn a_run_checkpointed_while_awaiting_approval_continues_after_restore() {
    // Uninterrupted, for reference.
    let (_, reference) = approval_run(vec![decision(Review::Yes, None)], vec![ONE_TOOL, TEXT]);

    // Stop at the approval, as a Durable Object would, keeping only the checkpoint.
    let mut run = started(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.events.last().unwrap().event.kind(), "tool_approval");
    let saved = run.checkpoint().expect("a run serializes");
    let logged = host.events.last().unwrap().envelope.event_id.unwrap();
    drop(run);

    let mut restored = Run::restore(&saved).unwrap();
    restored.resume(logged);
    assert_eq!(restored.pending_approvals().len(), 1);
    host.approvals.push_back(decision(Review::Yes, None));
    host.drive(&mut restored);
    assert!(host.finished);
    assert_eq!(host.kinds(), reference.kinds());
    let ids: Vec<u64> = host
        .events
        .iter()
        .map(|e| e.envelope.event_id.unwrap())
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(reply_of(&host), reply_of(&reference));
}

#[test]
fn a_tool_result_of_megabytes_is_cut_to_what_the_model_and_the_log_keep() {
    // A window the cut result fits in, so no compaction comes between.
    let config = Config {
        context_window: 1_000_000,
        ..Config::default()
    };
    let mut run = started(
        config,
        tools(false),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        result_bytes: Some(3_000_000),
        ..Host::default()
    };
    host.drive(&mut run);
    assert!(host.finished);
    let sent = host.requests[1]
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(result) => Some(result.content.clone()),
            _ => None,
        })
        .expect("the tool result went back to the model");
    assert!(sent.len() < MAX_TOOL_RESULT_BYTES + 100, "{}", sent.len());
    assert!(sent.ends_with(&format!(
        "[truncated: the tool returned 3000000 bytes; the first {MAX_TOOL_RESULT_BYTES} are shown]"
    )));
    let logged = host
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::ToolEnd { result, .. } => Some(result.len()),
            _ => None,
        })
        .expect("a tool_end event");
    assert!(logged < MAX_TOOL_RESULT_BYTES + 100, "{logged}");
}

/// A checkpoint written by the build of 2026-11-24 (a run waiting for the approval of
/// `get_weather`, 16 events logged): a deploy must not strand the runs it finds in storage, so
/// every later build restores it. `WEFT_BLESS_CHECKPOINTS=1` rewrites it from today's build,
/// which only a deliberate format break should do.
const GOLDEN_CHECKPOINT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/checkpoints/awaiting-approval.2026-11-24.json"
);

#[test]
fn a_checkpoint_of_an_earlier_build_restores_and_the_run_goes_on() {
    if std::env::var_os("WEFT_BLESS_CHECKPOINTS").is_some() {
        let mut run = started(
            Config::default(),
            tools(true),
            Session::default(),
            &start("Weather in SF?"),
        );
        let mut host = Host {
            streams: [ONE_TOOL].into(),
            ..Host::default()
        };
        host.drive(&mut run);
        assert_eq!(
            host.events.len(),
            16,
            "the fixture's event count is in its doc"
        );
        let saved = run.checkpoint().expect("a run serializes");
        std::fs::write(GOLDEN_CHECKPOINT, saved + "\n").expect("fixture written");
    }
    let saved = std::fs::read_to_string(GOLDEN_CHECKPOINT).expect("the golden checkpoint");
    let mut restored = Run::restore(saved.trim()).expect("an earlier build's checkpoint restores");
    restored.resume(16);
    assert_eq!(restored.pending_approvals().len(), 1);
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.approvals.push_back(decision(Review::Yes, None));
    host.drive(&mut restored);
    assert!(host.finished);
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(host.events.first().unwrap().envelope.event_id, Some(17));
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
}

#[test]
fn a_forged_or_stale_approval_is_refused_and_nothing_runs() {
    let mut run = started(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let forged = ApprovalDecision {
        call_id: Some("call_forged".into()),
        ..decision(Review::Yes, None)
    };
    assert!(run.handle(Input::Approval(forged)).is_err());
    assert!(run
        .handle(Input::ToolResult {
            call_id: "call_forged".into(),
            result: "x".into(),
            is_error: false
        })
        .is_err());
    assert!(host.tools_run.is_empty());
    assert_eq!(run.pending_approvals().len(), 1);
}

#[test]
fn verbose_snapshots_follow_each_node_and_a_thread_checkpoint_closes_the_run() {
    let start = Start {
        thread_id: Some("thread-9".into()),
        verbose: true,
        ..start("Weather?")
    };
    let mut run = Run::new(Config::default(), tools(false), Session::default(), &start);
    run.set_clock(1_763_805_600_000);
    run.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    let exits: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "node_exit")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(exits.len(), 3);
    for i in exits {
        assert_eq!(kinds[i + 1..i + 3], ["values", "updates"]);
    }
    assert_eq!(kinds[kinds.len() - 2..], ["checkpoint", "run_end"]);
    let Event::Checkpoint {
        thread_id,
        timestamp,
        step,
        ..
    } = &host.events[host.events.len() - 2].event
    else {
        panic!()
    };
    assert_eq!(thread_id.as_deref(), Some("thread-9"));
    assert_eq!(timestamp, "2025-11-22T10:00:00Z");
    assert_eq!(*step, 2);
    let Event::Updates { id, state } = &host
        .events
        .iter()
        .find(|e| e.event.kind() == "updates")
        .unwrap()
        .event
    else {
        panic!()
    };
    assert_eq!(id, "think");
    assert_eq!(state["iteration"], 1);
}

#[test]
fn an_approval_nobody_can_give_is_refused_with_its_reason_and_the_run_goes_on() {
    let mut run = Run::new(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather?"),
    );
    run.set_clock(5_000);
    run.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let waiting: Vec<(String, String, Option<i64>)> = run
        .waiting_approvals()
        .map(|(id, name, at)| (id.to_string(), name.to_string(), at))
        .collect();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].1, "get_weather");
    assert_eq!(
        waiting[0].2,
        Some(5_000),
        "the ask is timed on the run's clock"
    );
    let reason = "no connected client can approve get_weather";
    run.handle(Input::Refuse {
        call_id: waiting[0].0.clone(),
        reason: reason.into(),
    })
    .unwrap();
    host.drive(&mut run);
    assert!(host.tools_run.is_empty());
    let end = host.events.iter().find_map(|e| match &e.event {
        Event::ToolEnd {
            result, is_error, ..
        } => Some((result.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(
        end,
        Some((reason.into(), true)),
        "never 'denied by the user'"
    );
    assert!(
        matches!(&run.session().history[2], ChatMessage::Tool(r) if r.content == reason),
        "the model hears the reason"
    );
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
    assert_eq!(run.waiting_approvals().count(), 0);
}

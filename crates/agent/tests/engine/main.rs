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

mod approvals;
mod compaction;
mod config;
mod lifecycle;
mod remote;
mod replies;

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
    /// Every tool reports this output before its result.
    output: Option<&'static str>,
}

impl Host {
    fn kinds(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.event.kind()).collect()
    }

    /// Runs until the run finishes, or waits for an approval nobody scripted.
    fn drive(&mut self, run: &mut Run) {
        let mut tools: Vec<(String, String)> = Vec::new();
        // A run already waiting (restored from a checkpoint: it does not ask again) is answered
        // from the script as one that asks now.
        let mut awaiting = !run.pending_approvals().is_empty();
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
                    Effect::CallRemote { .. } => panic!("weft's own agents call no remote agent"),
                    Effect::Checkpoint => self.checkpoints += 1,
                    Effect::Finished => self.finished = true,
                },
                None => {
                    if !tools.is_empty() {
                        if self.reverse_results {
                            tools.reverse();
                        }
                        for (call_id, result) in tools.drain(..) {
                            if let Some(content) = self.output {
                                let call_id = call_id.clone();
                                let content = content.into();
                                run.handle(Input::ToolOutput { call_id, content }).unwrap();
                            }
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

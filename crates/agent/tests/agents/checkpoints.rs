//! Checkpoints written by the build of 2026-11-28, one per agent step a run can be stored in
//! (its own steps — `understand`, `think_evaluate`, a GoT node acting — among them): a deploy
//! must not strand the runs it finds in storage, so every later build restores each and
//! carries it on to the answer the uninterrupted run gives. `WEFT_BLESS_CHECKPOINTS=1`
//! rewrites them from today's build, which only a deliberate format break should do.

use super::*;

/// One stored run: how to get the reference run, and where the stored one was stopped.
struct Golden {
    file: &'static str,
    /// The run, started.
    run: fn() -> Run,
    model: fn(&ChatRequest) -> Reply,
    tool: fn() -> Tool,
    /// The approvals the whole run is given (those before the stop included).
    approvals: usize,
    /// Stop here (the host dies): the stored run is the last checkpoint asked for before.
    stop: fn(&[Sequenced]) -> bool,
    /// The events a restart adds (closing the response it cut), and the span that response
    /// was in: asked for again, the run then goes on as the uninterrupted one did from there.
    cut: &'static [&'static str],
    again: &'static str,
}

fn plain_tool() -> Tool {
    Box::new(|name, args| (format!("{name} says ok to {args}"), false))
}

fn first_chunk_of(node: &'static str) -> impl Fn(&[Sequenced]) -> bool {
    move |events| {
        events
            .iter()
            .any(|e| matches!(&e.event, Event::MessageChunk { id, .. } if id == node))
    }
}

fn asked(events: &[Sequenced]) -> bool {
    events
        .last()
        .is_some_and(|e| e.event.kind() == "tool_approval")
}

const GOLDEN: &[Golden] = &[
    Golden {
        file: "dup-understanding.2026-11-28.json",
        run: || dup::dup_run(true),
        model: dup::dup_model,
        tool: plain_tool,
        approvals: 1,
        stop: |events| first_chunk_of("understand")(events),
        cut: &["llm_complete interrupted", "exit understand err"],
        again: "enter understand",
    },
    Golden {
        file: "dup-awaiting-approval.2026-11-28.json",
        run: || dup::dup_run(true),
        model: dup::dup_model,
        tool: plain_tool,
        approvals: 1,
        stop: asked,
        cut: &[],
        again: "",
    },
    Golden {
        file: "tot-evaluating.2026-11-28.json",
        run: || tot::tot_run(weather(true), Config::default()),
        model: tot::tot_model,
        tool: tot::tot_tool,
        approvals: 2,
        stop: |events| first_chunk_of("think_evaluate")(events),
        cut: &["llm_complete interrupted", "exit think_evaluate err"],
        again: "enter think_evaluate",
    },
    Golden {
        file: "tot-acting-mid-response.2026-11-28.json",
        run: || tot::tot_run(weather(true), Config::default()),
        model: tot::tot_model,
        tool: tot::tot_tool,
        approvals: 2,
        stop: |events| {
            events
                .last()
                .is_some_and(|e| e.event.kind() == "tool_call_chunk")
        },
        cut: &["llm_complete interrupted", "exit act err"],
        again: "enter act",
    },
    Golden {
        file: "tot-awaiting-approval.2026-11-28.json",
        run: || tot::tot_run(weather(true), Config::default()),
        model: tot::tot_model,
        tool: tot::tot_tool,
        approvals: 2,
        stop: asked,
        cut: &[],
        again: "",
    },
    Golden {
        file: "got-planning.2026-11-28.json",
        run: || got::got_run(weather(true), false),
        model: got::got_model,
        tool: plain_tool,
        approvals: 2,
        stop: |events| first_chunk_of("plan_graph")(events),
        cut: &["llm_complete interrupted", "exit plan_graph err"],
        again: "enter plan_graph",
    },
    Golden {
        file: "got-node-awaiting-approval.2026-11-28.json",
        run: || got::got_run(weather(true), false),
        model: got::got_model,
        tool: plain_tool,
        approvals: 2,
        stop: asked,
        cut: &[],
        again: "",
    },
];

fn path(file: &str) -> String {
    format!(
        "{}/tests/fixtures/checkpoints/{file}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn driver(g: &Golden, approvals: usize) -> Host {
    let mut h = host(g.model);
    h.tool = (g.tool)();
    h.interleave = true;
    h.approvals.extend((0..approvals).map(|_| yes()));
    h
}

#[test]
fn each_agents_checkpoints_of_an_earlier_build_restore_and_the_run_goes_on() {
    for g in GOLDEN {
        let mut reference = driver(g, g.approvals);
        reference.drive(&mut (g.run)());
        assert!(reference.finished, "{}", g.file);

        // The run as the host that died had it: its events, the last checkpoint it stored.
        let mut before = driver(g, g.approvals);
        let stop = g.stop;
        before.stop = Some(Box::new(move |events, _| stop(events)));
        let mut run = (g.run)();
        before.drive(&mut run);
        let logged = before.events.len();
        let answered = g.approvals - before.approvals.len();
        if std::env::var_os("WEFT_BLESS_CHECKPOINTS").is_some() {
            let saved = before.saved.clone().expect("a checkpoint");
            std::fs::write(path(g.file), saved + "\n").expect("fixture written");
        }

        let saved = std::fs::read_to_string(path(g.file)).expect("the golden checkpoint");
        let mut restored = Run::restore(saved.trim())
            .unwrap_or_else(|e| panic!("{}: an earlier build's checkpoint restores: {e}", g.file));
        restored.resume(logged as u64);
        let mut after = driver(g, g.approvals - answered);
        after.awaiting = !restored.pending_approvals().is_empty();
        after.events = before.events.clone();
        after.drive(&mut restored);
        assert!(after.finished, "{}", g.file);
        after.assert_dense();
        assert_eq!(after.reply(), reference.reply(), "{}", g.file);

        let trace = after.trace();
        let reference_trace = reference.trace();
        let stopped = before.trace().len();
        let cut_end = stopped + g.cut.len();
        assert_eq!(trace[stopped..cut_end], lines(g.cut), "{}", g.file);
        // A cut response is asked for again from its start; a run stored between responses
        // goes on where it stopped.
        let redone = if g.cut.is_empty() {
            stopped
        } else {
            reference_trace[..stopped]
                .iter()
                .rposition(|l| l == g.again)
                .unwrap_or_else(|| panic!("{}: {} in the reference", g.file, g.again))
        };
        assert_eq!(
            trace[cut_end..],
            reference_trace[redone..],
            "{}: {:?}",
            g.file,
            trace
        );
    }
}

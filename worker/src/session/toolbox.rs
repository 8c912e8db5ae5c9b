//! The tools a session's runs may call: the built-in ones, the operator's MCP servers', then
//! those its clients run themselves (sockets, and AI SDK pages), as the model and the clients
//! see them; and which client calls are left without anyone to answer them.
//!
//! Plain data, no runtime: the object gathers the clients' tools and carries out the outcome.

use weft_agent::engine::ToolInfo;
use weft_agent::provider::ToolDef;
use weft_agent::tools;
use weft_protocol::command::{ToolFormat, ToolShowQuery};
use weft_protocol::event::ToolSpec;
use weft_protocol::Event;

use super::error_event;
use super::socket::ClientTool;

/// The built-in tools, the MCP servers' (named apart from the built-in ones already), then
/// the clients' (in the order given), as the engine sees them. A client tool named like a
/// tool before it is left out: the first one wins. A client tool that is not read-only asks
/// for approval.
pub(super) fn tool_infos(
    mcp_tools: Vec<ToolInfo>,
    client_tools: impl IntoIterator<Item = ClientTool>,
) -> Vec<ToolInfo> {
    let mut infos: Vec<ToolInfo> = tools::builtin_specs()
        .into_iter()
        .map(|spec| ToolInfo {
            needs_approval: tools::needs_approval(&spec.name),
            def: def_of(&spec),
            client: false,
        })
        .collect();
    infos.extend(mcp_tools);
    for t in client_tools {
        if infos.iter().any(|i| i.def.name == t.name) {
            continue;
        }
        infos.push(ToolInfo {
            def: ToolDef {
                name: t.name,
                description: t.description.unwrap_or_default(),
                input_schema: t.input_schema,
            },
            needs_approval: !t.read_only,
            client: true,
        });
    }
    infos
}

/// The tools as `tools_list` shows them, by name.
pub(super) fn tool_specs(infos: Vec<ToolInfo>) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = infos
        .into_iter()
        .map(|i| ToolSpec {
            name: i.def.name,
            description: Some(i.def.description),
            input_schema: i.def.input_schema.into(),
            read_only: !i.needs_approval,
        })
        .collect();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    specs
}

/// The answer to `tool_show`: the tool in the format asked for (YAML unless JSON is), or
/// `tool_not_found`.
pub(super) fn tool_show(specs: Vec<ToolSpec>, q: ToolShowQuery) -> Event {
    let Some(spec) = specs.into_iter().find(|t| t.name == q.name) else {
        let message = format!("tool not found: {}", q.name);
        return error_event(&message, "tool_not_found", Some(q.id));
    };
    match q.output {
        Some(ToolFormat::Json) => Event::ToolShow {
            id: q.id,
            tool: Some(tools::spec_json(&spec).into()),
            tool_yaml: None,
        },
        _ => Event::ToolShow {
            id: q.id,
            tool: None,
            tool_yaml: Some(tools::spec_yaml(&spec)),
        },
    }
}

pub(super) fn def_of(spec: &ToolSpec) -> ToolDef {
    ToolDef {
        name: spec.name.clone(),
        description: spec.description.clone().unwrap_or_default(),
        input_schema: spec.input_schema.to_value(),
    }
}

/// The running calls (`(call id, tool)`) of a client that is leaving, running `tools`, that no
/// other client runs (`others_run`): nobody will answer them.
pub(super) fn orphaned_calls(
    running: Vec<(&str, &str)>,
    tools: &[ClientTool],
    others_run: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    running
        .into_iter()
        .filter(|(_, name)| tools.iter().any(|t| t.name == *name))
        .filter(|(_, name)| !others_run(name))
        .map(|(id, name)| (id.to_string(), name.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn client(name: &str, read_only: bool) -> ClientTool {
        ClientTool {
            name: name.into(),
            description: None,
            input_schema: json!({"type": "object"}),
            read_only,
        }
    }

    #[test]
    fn client_tools_follow_the_builtins_and_ask_approval_unless_read_only() {
        let builtins = tool_infos(vec![], []);
        assert!(!builtins.is_empty() && builtins.iter().all(|i| !i.client));
        let builtin = builtins[0].def.name.clone();
        let mcp = ToolInfo {
            def: ToolDef {
                name: "docs_lookup".into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
            },
            needs_approval: false,
            client: false,
        };
        let infos = tool_infos(
            vec![mcp],
            [
                client("pick_color", true),
                client("delete_page", false),
                client(&builtin, true),
                client("pick_color", false),
                client("docs_lookup", true),
            ],
        );
        let clients: Vec<(&str, bool)> = infos
            .iter()
            .filter(|i| i.client)
            .map(|i| (i.def.name.as_str(), i.needs_approval))
            .collect();
        assert_eq!(clients, [("pick_color", false), ("delete_page", true)]);
        assert_eq!(infos.len(), builtins.len() + 3);
        assert_eq!(infos[builtins.len()].def.name, "docs_lookup");
        assert!(!infos[builtins.len()].client);
    }

    #[test]
    fn tools_list_is_by_name_and_tool_show_answers_in_the_format_asked() {
        let specs = tool_specs(tool_infos(vec![], [client("aaa_first", true)]));
        assert_eq!(specs[0].name, "aaa_first");
        assert!(specs.windows(2).all(|w| w[0].name <= w[1].name));
        let ask = |output| ToolShowQuery {
            id: "q".into(),
            name: "aaa_first".into(),
            output,
            working_folder: None,
            thread_id: None,
        };
        match tool_show(specs.clone(), ask(Some(ToolFormat::Json))) {
            Event::ToolShow {
                id,
                tool: Some(tool),
                tool_yaml: None,
            } => {
                assert_eq!(id, "q");
                assert_eq!(tool, tools::spec_json(&specs[0]).into());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            tool_show(specs.clone(), ask(None)),
            Event::ToolShow {
                tool: None,
                tool_yaml: Some(_),
                ..
            }
        ));
        let missing = ToolShowQuery {
            name: "nope".into(),
            ..ask(None)
        };
        match tool_show(specs, missing) {
            Event::Error {
                message, code, id, ..
            } => {
                assert_eq!(message, "tool not found: nope");
                assert_eq!(
                    (code.as_deref(), id.as_deref()),
                    (Some("tool_not_found"), Some("q"))
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_leaving_clients_calls_are_orphaned_unless_another_runs_the_tool() {
        let running = vec![
            ("c1", "pick_color"),
            ("c2", "web_fetch"),
            ("c3", "ask_user"),
        ];
        let tools = [client("pick_color", true), client("ask_user", true)];
        let orphaned = orphaned_calls(running.clone(), &tools, |name| name == "ask_user");
        assert_eq!(orphaned, [("c1".to_string(), "pick_color".to_string())]);
        assert!(orphaned_calls(running, &[], |_| false).is_empty());
    }
}

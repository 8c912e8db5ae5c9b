//! What the session knows of each MCP server (session/mcp.rs): its tools, its era and
//! session, and how the last discovery went, one row per server, so an object that wakes has
//! its tools without asking the servers again; and the servers its clients added (their URL
//! and headers), which live with the session and nowhere else.

use super::{rows, s, text, Store};

impl Store {
    /// Every server's stored entry (JSON), by server name.
    pub fn mcp_entries(&self) -> worker::Result<Vec<(String, String)>> {
        let found = rows(&self.sql, "SELECT name, entry FROM mcp_servers", None)?;
        let mut entries = Vec::with_capacity(found.len());
        for mut row in found {
            let (Some(name), Some(entry)) = (text(&mut row, 0), text(&mut row, 1)) else {
                continue;
            };
            entries.push((name, self.unpack(entry)?));
        }
        Ok(entries)
    }

    /// Stores a server's entry (a catalog can outgrow a row: it is packed).
    pub fn save_mcp_entry(&self, name: &str, entry: &str) -> worker::Result<()> {
        let entry = self.pack(&format!("mcp:{name}"), entry)?;
        self.exec(
            "INSERT INTO mcp_servers (name, entry) VALUES (?, ?) \
             ON CONFLICT(name) DO UPDATE SET entry = excluded.entry",
            vec![s(name), s(&entry)],
        )?;
        Ok(())
    }

    /// The servers clients added to the session (JSON `{url, headers}`), by name.
    pub fn mcp_client_servers(&self) -> worker::Result<Vec<(String, String)>> {
        let found = rows(
            &self.sql,
            "SELECT name, server FROM mcp_client_servers",
            None,
        )?;
        let mut servers = Vec::with_capacity(found.len());
        for mut row in found {
            if let (Some(name), Some(server)) = (text(&mut row, 0), text(&mut row, 1)) {
                servers.push((name, server));
            }
        }
        Ok(servers)
    }

    /// Stores (or replaces) a server a client added.
    pub fn save_mcp_client_server(&self, name: &str, server: &str) -> worker::Result<()> {
        self.exec(
            "INSERT INTO mcp_client_servers (name, server) VALUES (?, ?) \
             ON CONFLICT(name) DO UPDATE SET server = excluded.server",
            vec![s(name), s(server)],
        )?;
        Ok(())
    }
}

//! What the session knows of each MCP server (session/mcp.rs): its tools, its era and
//! session, and how the last discovery went, one row per server, so an object that wakes has
//! its tools without asking the servers again.

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
}

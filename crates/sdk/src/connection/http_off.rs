//! The HTTP room in a build without the `agui` feature: there is never an HTTP side (`Client`
//! refuses `dialect: "agui"`, and `Http` has no value), so the other rooms' calls into it do
//! nothing, and none of AG-UI's client code is linked.

use weft_protocol::Dialect;

use super::{Connection, RunHandle};
use crate::error::{Error, ErrorCode};
use crate::types::RunOptions;

/// Never an AG-UI endpoint: this build has no AG-UI.
pub fn agui_over_http(_dialect: Dialect, _url: &str) -> Option<String> {
    None
}

/// No HTTP side can exist in this build.
#[derive(Debug)]
pub(super) enum Http {}

impl Connection {
    pub(super) fn http_connect(&mut self) {}

    pub(super) fn http_run(
        &mut self,
        _opts: RunOptions,
        _run_id: String,
    ) -> Result<RunHandle, Error> {
        Err(Error::new(ErrorCode::Internal, "not an HTTP connection"))
    }

    pub fn http_chunk(&mut self, _bytes: &[u8]) {}

    pub fn http_end(&mut self) {}

    pub fn http_failed(&mut self, _message: String) {}

    pub(super) fn http_answer(
        &mut self,
        _call_id: Option<String>,
        _approved: bool,
        _message: Option<String>,
    ) {
    }

    pub(super) fn http_tool_result(&mut self, _call_id: String, _result: String, _is_error: bool) {}

    pub(super) fn http_cancel(&mut self, _run: RunHandle) {}

    pub(super) fn http_close(&mut self) {}
}

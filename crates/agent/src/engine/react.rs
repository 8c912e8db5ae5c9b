//! react: `think` (stream the model, every tool offered) → `act` (run the tools it called) →
//! `think` … until a reply without tool calls, the iteration cap, a `pause_after` tool, or
//! `no-exit`. Its steps are the shared loop's defaults ([`Steps`]), so this room only says
//! where it begins.

use super::steps::Steps;
use super::Run;

/// react's answers to the shared loop.
pub(super) struct ReactSteps;

impl Steps for ReactSteps {
    fn begin(&self, run: &mut Run) {
        run.think();
    }
}

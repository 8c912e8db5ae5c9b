//! `dialectInfo()`: what differs by dialect, for the app. The rules are the dialect's
//! description in the protocol ([`weft_protocol::Dialect::describe`], STYLE 17); the SDK
//! follows them itself and hands them to an app that needs them (the demo's connection panel,
//! which requests to offer, whether the agent panel can draw a plan) instead of letting it keep
//! a copy.

use tsify::Ts;
use wasm_bindgen::prelude::*;

use crate::connection::RequestKind;
use crate::marshal;
use crate::reassembler::parse_dialect;
use crate::types::DialectInfo;

/// What differs by dialect: its endpoint path, the requests a weft server serves on it,
/// whether its runs report the context window and carry the agents' plans, and whether its run
/// request takes the run options. Throws `invalid_argument` for an unknown dialect.
#[wasm_bindgen(js_name = dialectInfo)]
pub fn dialect_info(
    #[wasm_bindgen(unchecked_param_type = "Dialect")] dialect: &str,
) -> Result<Ts<DialectInfo>, JsValue> {
    let dialect = parse_dialect(dialect)?;
    let info = DialectInfo {
        endpoint: dialect.endpoint(),
        requests: RequestKind::ALL
            .into_iter()
            .filter(|k| dialect.serves(&k.sample()))
            .map(RequestKind::name)
            .collect(),
        reports_context: dialect.reports_context(),
        plans: dialect.carries_plans(),
        run_options: dialect.run_options(),
    };
    Ok(marshal::to_ts(&info.to_json())?)
}

#[cfg(test)]
mod tests {
    use weft_protocol::Dialect;

    /// tsify takes the TypeScript `Dialect` union as a string literal (`tsify(type = …)` on the
    /// protocol's enum), so it cannot be built from the descriptions: this holds the published
    /// one (the committed `.d.ts`, which `tests/sdk/check-dts.sh` holds to the generated one)
    /// to `Dialect::ALL`.
    #[test]
    fn the_typescript_dialect_union_is_every_dialect() {
        let dts = include_str!("../../../tests/sdk/weft_sdk.d.ts");
        let union = dts
            .lines()
            .find_map(|l| l.strip_prefix("export type Dialect = "))
            .expect("the .d.ts declares Dialect");
        let names: Vec<String> = Dialect::ALL
            .iter()
            .map(|d| format!("\"{}\"", d.describe().name))
            .collect();
        assert_eq!(union, format!("{};", names.join(" | ")));
    }
}

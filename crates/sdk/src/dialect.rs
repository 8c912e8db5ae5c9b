//! `dialectInfo()`: what differs by dialect, for the app. The rules are methods of the
//! protocol's [`Dialect`] (STYLE 17); the SDK follows them itself and hands them to an app that
//! needs them (the demo's connection panel, which requests to offer) instead of letting it keep
//! a copy.

use tsify::Ts;
use wasm_bindgen::prelude::*;

use crate::connection::RequestKind;
use crate::marshal;
use crate::reassembler::parse_dialect;
use crate::types::DialectInfo;

/// What differs by dialect: its endpoint path, the requests a weft server serves on it, and
/// whether its runs report the context window. Throws `invalid_argument` for an unknown
/// dialect.
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
    };
    Ok(marshal::to_ts(&info.to_json())?)
}

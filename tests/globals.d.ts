// Types every suite shares: JSON as the suites read it, and what their pages put on `window`
// for the Node side to reach through `page.evaluate`.

declare global {
  /**
   * A JSON object off the wire or out of a provider's API, as the suites build and read it
   * field by field: its shape is what the assertions check.
   */
  type Json = Record<string, any>;

  interface Window {
    /** tests/sdk/browser-page.mjs */
    weft: typeof import('./sdk/browser-page.mjs').weft;
    weftReady: boolean;
    /** browser.test.mjs exposes it: cuts every connection under the page (tests/sdk/harness.mjs `relay`), resolves with how many. */
    cutNetwork: () => Promise<number>;
    /** tests/sdk/originals/page.mjs */
    env: { Client: typeof import('weft-sdk').Client; within: typeof import('./sdk/originals/within.mjs').within };
    ready: boolean;
    /** tests/aisdk/app/main.jsx: every state each tool part was rendered in. */
    __aisdk: { toolStates: Record<string, string[]>; renders: number };
    /** What a test's MutationObserver saw, in order (www/app.test.mjs, aisdk/aisdk.test.mjs). */
    cards: string[];
    graphs: string[];
    shown: string[];
    /** Set only if model output ran as script (www/app.test.mjs checks it never is). */
    __pwned?: number;
  }
  /** `window.weft` as the functions browser.test.mjs evaluates in the page name it. */
  var weft: Window['weft'];
}

export {};

// weft-sdk/ai alone, every export (what the subpath adds to an app that has weft-sdk and the AI
// SDK already; it imports neither). Bundle-size entry, not an app.
export * from 'weft-sdk/ai';

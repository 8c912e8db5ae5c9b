// An OAuth 2.1 authorization server and an MCP server that requires its tokens, both on
// 127.0.0.1, for the MCP OAuth suite. Both are the MCP TypeScript SDK's own parts:
// `mcpAuthRouter` (metadata, Dynamic Client Registration, /authorize with PKCE, /token) over
// its in-memory demo provider, which approves every authorization at once (the user's consent
// auto-approved); `mcpAuthMetadataRouter` (the protected resource metadata) and
// `requireBearerAuth` (401 with `WWW-Authenticate: Bearer … resource_metadata=…`) in front of
// an MCP server made with `@modelcontextprotocol/server`.
//
// Written for the test, and only this: the demo provider's storage glue for refresh tokens,
// which the demo leaves out — `exchangeAuthorizationCode` also returns a refresh token (and,
// with `expiresIn`, says the access token expires that soon), `exchangeRefreshToken` issues a
// new access token, and `revoke()` forgets every token, as a user revoking the grant would.

import { randomUUID } from 'node:crypto';

import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  createOAuthMetadata,
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import express from 'express';
import { z } from 'zod';

/** The demo provider, with refresh tokens. */
class Provider extends DemoInMemoryAuthProvider {
  /** @param {number | undefined} expiresIn seconds the access tokens are said to last */
  constructor(expiresIn) {
    super(undefined);
    this.expiresIn = expiresIn;
    /** @type {Map<string, { clientId: string, scopes: string[], resource?: URL }>} */
    this.refreshTokens = new Map();
    /** Refresh grants answered, in order. */
    this.refreshed = 0;
    /** Every access and refresh token issued, for the leak checks. */
    this.issued = [];
  }

  /** The demo's token store (private in its types, a plain field in its code). @returns {Map<string, any>} */
  get issuedTokens() {
    return /** @type {any} */ (this).tokens;
  }

  /** A refresh token beside the access token; `expires_in` as configured. */
  #withRefresh(tokens, clientId, resource) {
    const refresh = randomUUID();
    const data = this.issuedTokens.get(tokens.access_token);
    this.refreshTokens.set(refresh, { clientId, scopes: data?.scopes ?? [], resource: data?.resource ?? resource });
    this.issued.push(tokens.access_token, refresh);
    return { ...tokens, refresh_token: refresh, ...(this.expiresIn ? { expires_in: this.expiresIn } : {}) };
  }

  async exchangeAuthorizationCode(client, code, verifier) {
    const tokens = await super.exchangeAuthorizationCode(client, code, verifier);
    return this.#withRefresh(tokens, client.client_id, undefined);
  }

  async exchangeRefreshToken(client, refreshToken, _scopes, resource) {
    const data = this.refreshTokens.get(refreshToken);
    if (!data || data.clientId !== client.client_id) throw new InvalidGrantError('refresh token unknown or revoked');
    this.refreshTokens.delete(refreshToken);
    this.refreshed += 1;
    const token = randomUUID();
    this.issuedTokens.set(token, {
      token,
      clientId: client.client_id,
      scopes: data.scopes,
      expiresAt: Date.now() + 3_600_000,
      resource: data.resource ?? resource,
      type: 'access',
    });
    return this.#withRefresh({ access_token: token, token_type: 'bearer', expires_in: 3600 }, client.client_id, resource);
  }

  /** Forgets the access tokens (the next call is refused, a refresh mends it). */
  expireAccessTokens() {
    this.issuedTokens.clear();
  }

  /** Forgets every token: the user revoked the grant. */
  revoke() {
    this.issuedTokens.clear();
    this.refreshTokens.clear();
  }
}

function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', (/** @type {any} */ error) => (error ? reject(error) : resolve(server)));
  });
}

/** The MCP server's one tool. */
function notesServer() {
  const server = new McpServer({ name: 'weft-oauth-fixture', version: '1.0.0' });
  server.registerTool(
    'lookup',
    {
      description: 'Looks a term up in the private notes.',
      inputSchema: z.object({ term: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ term }) => ({ content: [{ type: 'text', text: `${term}: a private note` }] }),
  );
  return server;
}

/**
 * Starts both servers on free ports.
 * @param {{ expiresIn?: number }} [opts]
 */
export async function startOAuthServers(opts = {}) {
  const provider = new Provider(opts.expiresIn);
  const noLimit = { rateLimit: /** @type {false} */ (false) };

  const authApp = express();
  const authHttp = await listen(authApp);
  const issuerUrl = new URL(`http://127.0.0.1:${authHttp.address().port}/`);
  authApp.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      authorizationOptions: noLimit,
      tokenOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
    }),
  );

  const mcpApp = express();
  const mcpHttp = await listen(mcpApp);
  const mcpUrl = new URL(`http://127.0.0.1:${mcpHttp.address().port}/mcp`);
  const handler = createMcpHandler(notesServer, { legacy: 'reject', responseMode: 'json' });
  /** Each request's `Authorization` (whether it had one), in order. */
  const log = [];
  mcpApp.use(mcpAuthMetadataRouter({ oauthMetadata: createOAuthMetadata({ provider, issuerUrl }), resourceServerUrl: mcpUrl }));
  mcpApp.post(
    '/mcp',
    (req, _res, next) => {
      log.push(Boolean(req.headers.authorization));
      next();
    },
    requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) }),
    express.raw({ type: '*/*' }),
    async (req, res) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const response = await handler.fetch(new Request(mcpUrl, { method: 'POST', headers, body: req.body }));
      res.status(response.status);
      for (const [k, v] of response.headers) res.setHeader(k, v);
      res.end(Buffer.from(await response.arrayBuffer()));
    },
  );

  const close = (server) => new Promise((r) => server.close(r));
  return {
    provider,
    issuer: issuerUrl.href,
    url: mcpUrl.href,
    log,
    async close() {
      authHttp.closeAllConnections();
      mcpHttp.closeAllConnections();
      await Promise.all([close(authHttp), close(mcpHttp)]);
      await handler.close();
    },
  };
}

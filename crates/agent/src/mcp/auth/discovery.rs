//! From a 401 to everything the authorization URL needs, as one sans-IO machine: the protected
//! resource metadata (each well-known URL in turn), the authorization server's metadata (each
//! in the specification's order), and the client (the operator's, one registered before, or a
//! new one by Dynamic Client Registration). The host sends each [`Step::Send`] and feeds the
//! answer to [`Discovery::next`]; one loop with one await, where a chain of async steps would
//! cost the Worker's upload several times the code.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::{
    authorization_server_metadata_urls, choose_client, registration_request,
    resource_metadata_urls, select_scope, AuthError, AuthServer, Challenge, Client, ClientChoice,
    Request, ResourceMetadata,
};

/// What the flow needs to make its authorization URL.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The protected resource (its `resource` goes in the requests).
    pub resource: ResourceMetadata,
    /// The scope to ask for.
    pub scope: Option<String>,
    /// The authorization server.
    pub server: AuthServer,
    /// Its metadata as fetched, for the host to keep with the flow and the grant (a woken
    /// object reads it again with [`AuthServer::parse`] instead of asking).
    pub metadata: String,
    /// The client to authorize as.
    pub client: Client,
    /// The client was registered just now: the host keeps it for the issuer.
    pub registered: bool,
}

/// What the host does next.
#[derive(Debug)]
pub enum Step {
    /// Send this and pass its status and body to [`Discovery::next`].
    Send(Request),
    /// Discovery is over.
    Done(Result<Box<Discovered>, AuthError>),
}

#[derive(Debug)]
enum Stage {
    Resource,
    Server(ResourceMetadata),
    Register(ResourceMetadata, AuthServer, String),
    Over,
}

/// The machine; see the module docs.
#[derive(Debug)]
pub struct Discovery {
    server_url: String,
    redirect_uri: String,
    challenge: Option<Challenge>,
    preregistered: Option<Client>,
    known: Vec<(String, Client)>,
    /// The documents still to try at this stage, the next last.
    urls: Vec<String>,
    stage: Stage,
}

fn get(url: String) -> Step {
    Step::Send(Request {
        method: "GET",
        url,
        headers: alloc::vec![("Accept".into(), "application/json".into())],
        body: None,
    })
}

impl Discovery {
    /// Discovery for the MCP server at `server_url`, from its 401's `WWW-Authenticate` (if
    /// any). `preregistered`: the operator's client; `known`: clients registered before, by
    /// issuer, for `redirect_uri`.
    pub fn new(
        server_url: &str,
        challenge: Option<&str>,
        redirect_uri: &str,
        preregistered: Option<Client>,
        known: Vec<(String, Client)>,
    ) -> Result<Discovery, AuthError> {
        let challenge = challenge.and_then(Challenge::parse);
        let mut urls = resource_metadata_urls(server_url, challenge.as_ref())?;
        urls.reverse();
        Ok(Discovery {
            server_url: server_url.into(),
            redirect_uri: redirect_uri.into(),
            challenge,
            preregistered,
            known,
            urls,
            stage: Stage::Resource,
        })
    }

    /// The next step, given the answer to the last request (`None` the first time).
    pub fn next(&mut self, answer: Option<(u16, &str)>) -> Step {
        match self.advance(answer) {
            Ok(step) => step,
            Err(e) => {
                self.stage = Stage::Over;
                Step::Done(Err(e))
            }
        }
    }

    fn advance(&mut self, answer: Option<(u16, &str)>) -> Result<Step, AuthError> {
        let found = match answer {
            Some((status, body)) if (200..300).contains(&status) => Some(body),
            _ => None,
        };
        let stage = core::mem::replace(&mut self.stage, Stage::Over);
        match (stage, found) {
            (Stage::Resource, Some(body)) => {
                let resource = ResourceMetadata::parse(&self.server_url, body)?;
                let mut urls =
                    authorization_server_metadata_urls(&resource.authorization_servers[0])?;
                urls.reverse();
                self.urls = urls;
                self.stage = Stage::Server(resource);
                self.ask("its authorization server publishes no metadata (RFC 8414)")
            }
            (Stage::Resource, None) => {
                self.stage = Stage::Resource;
                self.ask("it publishes no protected resource metadata (RFC 9728)")
            }
            (Stage::Server(resource), Some(body)) => {
                let issuer = &resource.authorization_servers[0];
                let server = AuthServer::parse(issuer, body)?;
                let scope = select_scope(self.challenge.as_ref(), &resource);
                let known = self
                    .known
                    .iter()
                    .find(|(i, _)| *i == server.issuer)
                    .map(|(_, c)| c.clone());
                let client = match (self.preregistered.take(), known) {
                    (None, Some(client)) => ClientChoice::Ready(client),
                    (pre, _) => choose_client(&server, pre.as_ref(), None)?,
                };
                match client {
                    ClientChoice::Ready(client) => Ok(Step::Done(Ok(Box::new(Discovered {
                        resource,
                        scope,
                        server,
                        metadata: body.into(),
                        client,
                        registered: false,
                    })))),
                    ClientChoice::Register => {
                        let request =
                            registration_request(&server, &self.redirect_uri, scope.as_deref())?;
                        self.stage = Stage::Register(resource, server, body.into());
                        Ok(Step::Send(request))
                    }
                }
            }
            (Stage::Server(resource), None) => {
                self.stage = Stage::Server(resource);
                self.ask("its authorization server publishes no metadata (RFC 8414)")
            }
            (Stage::Register(resource, server, metadata), _) => {
                let (status, body) = answer.unwrap_or((0, ""));
                let client = Client::parse_registration(status, body)?;
                Ok(Step::Done(Ok(Box::new(Discovered {
                    scope: select_scope(self.challenge.as_ref(), &resource),
                    resource,
                    server,
                    metadata,
                    client,
                    registered: true,
                }))))
            }
            (Stage::Over, _) => Err(AuthError::Undiscoverable {
                missing: "discovery was asked to go on after it ended",
            }),
        }
    }

    /// The next document of the stage, or `missing` when none is left.
    fn ask(&mut self, missing: &'static str) -> Result<Step, AuthError> {
        match self.urls.pop() {
            Some(url) => Ok(get(url)),
            None => Err(AuthError::Undiscoverable { missing }),
        }
    }
}

//! OAuth 2.1 access tokens (`merkle mcp --http --issuer URL --audience URI`): the JWTs an
//! authorization server issues, checked here as a resource server checks them.
//!
//! - **Keys.** The issuer's JSON Web Key Set comes from `--jwks-file` or `--jwks-url` (fetched
//!   through the [`FetchJson`] the server is given: the binary passes llm-core's, the one crate
//!   that speaks HTTP out, so this crate holds no HTTP client), once at start. A token naming a key
//!   (`kid`) the set lacks makes it read again, at most once a minute, so an issuer that rotates
//!   its keys is followed without a restart and a stream of made-up `kid`s costs one fetch a
//!   minute. Only public signature keys are taken: RSA (RS256/384/512, PS256/384/512), EC P-256
//!   (ES256) and P-384 (ES384), Ed25519 (EdDSA). Shared secrets (`oct` keys, HS256) are not,
//!   and a key whose `alg` is set verifies only that algorithm, so no token can choose how it
//!   is checked.
//! - **Checks.** The signature, `exp` and `nbf` (with a minute's leeway for clocks that
//!   disagree), `iss` equal to the issuer, and `aud` naming the audience (RFC 8707: a token
//!   minted for another resource is refused here). Each failure is a description of the check
//!   that failed, for the 401's `error_description`; none repeats any part of the token.
//! - **Grant.** What a token that passes is worth: its agent (the `sub` claim, or the claim
//!   `--agent-claim` names) and its scopes (`scope`, space-separated, or `scp`, a string or a
//!   list, as some issuers write it).
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::error::{Error, Result};

/// Where the issuer's keys are (messages name them by the CLI's flags, `--jwks-file` and
/// `--jwks-url`, as the server's operator knows them).
#[derive(Clone, Debug)]
pub enum KeySource {
    File(PathBuf),
    /// A URL, read with `fetch`.
    Url {
        url: String,
        fetch: FetchJson,
    },
}

/// What a fetch of a JSON document gives: the document, or why there is none.
pub type Fetched = std::result::Result<Value, Box<dyn std::error::Error + Send + Sync>>;

/// Fetches a JSON document from a URL (the issuer's key set), at most the given bytes of it
/// within the given time: whoever builds the server passes one in (the binary, llm-core's
/// `fetch_json`), so that the server itself holds no HTTP client.
#[derive(Clone)]
pub struct FetchJson(
    #[allow(clippy::type_complexity)]
    pub  Arc<
        dyn Fn(String, Duration, usize) -> Pin<Box<dyn Future<Output = Fetched> + Send>>
            + Send
            + Sync,
    >,
);

impl std::fmt::Debug for FetchJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FetchJson(..)")
    }
}

impl KeySource {
    /// The flag and value that named it, for messages.
    fn describe(&self) -> String {
        match self {
            KeySource::File(path) => format!("--jwks-file {}", path.display()),
            KeySource::Url { url, .. } => format!("--jwks-url {url}"),
        }
    }
}

/// The authorization server whose access tokens are taken (`--issuer` and its companions).
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    /// `iss` must equal this.
    pub issuer: String,
    /// `aud` must contain this: the resource this server is (RFC 8707).
    pub audience: String,
    /// The issuer's keys.
    pub keys: KeySource,
    /// The claim that names the token's merkle agent (usually `sub`).
    pub agent_claim: String,
}

/// What a token that passed every check grants.
#[derive(Debug)]
pub(crate) struct Claims {
    /// The merkle agent it acts as.
    pub(crate) agent: String,
    pub(crate) scopes: Vec<String>,
}

/// The most bytes of a key set read from a URL (real ones are a few kilobytes).
const MAX_JWKS_BYTES: usize = 1 << 20;

/// How long fetching the key set may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The shortest time between two reads of the key set for an unknown `kid`.
const REFRESH_EVERY: Duration = Duration::from_secs(60);

/// Seconds by which `exp` and `nbf` may be off, for clocks that disagree.
const LEEWAY_S: u64 = 60;

/// The signature algorithms taken, by the kind of key that verifies them.
const RSA_ALGORITHMS: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

/// One key of the set.
struct Key {
    kid: Option<String>,
    /// The algorithms it verifies: its `alg` if it names one, else those of its kind.
    algorithms: Vec<Algorithm>,
    key: DecodingKey,
}

/// Checks tokens against one issuer, audience and key set.
pub(crate) struct Verifier {
    config: OAuthConfig,
    keys: RwLock<Arc<Vec<Key>>>,
    /// When the key set was last read for an unknown `kid` (not counting the read at start);
    /// held while one is read, so concurrent requests wait for it rather than read it again.
    refreshed: tokio::sync::Mutex<Option<Instant>>,
}

impl Verifier {
    /// Reads the key set; an error names the flag, and the file or URL, at fault.
    pub(crate) async fn start(config: OAuthConfig) -> Result<Verifier> {
        let keys = load(&config.keys).await?;
        Ok(Verifier {
            config,
            keys: RwLock::new(Arc::new(keys)),
            refreshed: tokio::sync::Mutex::new(None),
        })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub(crate) fn audience(&self) -> &str {
        &self.config.audience
    }

    /// The token's grant, or why it is refused (for `error_description`).
    pub(crate) async fn verify(&self, token: &str) -> Result<Claims, String> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| "the token is not a well-formed JWT".to_owned())?;
        if !is_taken(header.alg) {
            return Err(format!(
                "the token is signed with {:?}, which this server does not take (it takes \
                 RSA, ECDSA and EdDSA signatures, never a shared secret)",
                header.alg
            ));
        }
        let keys = self.keys_for(header.kid.as_deref()).await?;
        let candidates: Vec<&Key> = keys
            .iter()
            .filter(|k| header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
            .filter(|k| k.algorithms.contains(&header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(format!(
                "no key of the issuer's key set verifies {:?} signatures{}",
                header.alg,
                if header.kid.is_some() {
                    " under the token's kid"
                } else {
                    ""
                }
            ));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_S;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut failure = None;
        for key in candidates {
            match jsonwebtoken::decode::<serde_json::Map<String, Value>>(
                token,
                &key.key,
                &validation,
            ) {
                Ok(data) => return self.grant(&data.claims),
                Err(e) => {
                    // A failure past the signature (a claim) says more than a key that did
                    // not match.
                    let signature =
                        matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature);
                    if failure.is_none() || !signature {
                        failure = Some(e);
                    }
                }
            }
        }
        let e = failure.expect("at least one candidate key was tried");
        Err(self.describe(e.kind()))
    }

    /// The key set, read again first when the token names a key it lacks and the last such
    /// read is a minute old.
    async fn keys_for(&self, kid: Option<&str>) -> Result<Arc<Vec<Key>>, String> {
        // A key without a kid may verify any token, so only a set where every key has one
        // can lack the token's.
        let has = |keys: &[Key]| {
            kid.is_none_or(|kid| {
                keys.iter()
                    .any(|k| k.kid.is_none() || k.kid.as_deref() == Some(kid))
            })
        };
        let current = self.current();
        if has(&current) {
            return Ok(current);
        }
        let mut refreshed = self.refreshed.lock().await;
        // Another request may have read it while this one waited.
        let current = self.current();
        if has(&current) {
            return Ok(current);
        }
        if refreshed.is_some_and(|at| at.elapsed() < REFRESH_EVERY) {
            return Err("the token's key (kid) is not in the issuer's key set".to_owned());
        }
        *refreshed = Some(Instant::now());
        match load(&self.config.keys).await {
            Ok(keys) => {
                let keys = Arc::new(keys);
                *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&keys);
                if has(&keys) {
                    Ok(keys)
                } else {
                    Err("the token's key (kid) is not in the issuer's key set".to_owned())
                }
            }
            Err(e) => {
                // The keys held stay; the operator learns why the new ones did not come.
                eprintln!(
                    "merkle mcp: reading the key set again failed: {}",
                    e.chain()
                );
                Err(
                    "the token's key (kid) is not in the issuer's key set, which could not be \
                     read again"
                        .to_owned(),
                )
            }
        }
    }

    fn current(&self) -> Arc<Vec<Key>> {
        Arc::clone(&self.keys.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The grant of a token whose signature and claims passed.
    fn grant(&self, claims: &serde_json::Map<String, Value>) -> Result<Claims, String> {
        let claim = &self.config.agent_claim;
        let agent = match claims.get(claim).and_then(Value::as_str) {
            Some(agent) if !agent.trim().is_empty() => agent.to_owned(),
            _ => return Err(format!("the token has no {claim} claim naming its agent")),
        };
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => {
                s.split_whitespace().map(str::to_owned).collect()
            }
            (None, Some(Value::Array(list))) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Ok(Claims { agent, scopes })
    }

    /// Which check a token failed, in words.
    fn describe(&self, kind: &jsonwebtoken::errors::ErrorKind) -> String {
        use jsonwebtoken::errors::ErrorKind as K;
        match kind {
            K::InvalidSignature => {
                "the signature does not verify against the issuer's key".to_owned()
            }
            K::ExpiredSignature => "the token has expired (exp)".to_owned(),
            K::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
            K::InvalidIssuer => format!("the token's issuer (iss) is not {}", self.config.issuer),
            K::InvalidAudience => format!(
                "the token's audience (aud) does not include {}",
                self.config.audience
            ),
            K::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
            K::InvalidAlgorithm => "the token's algorithm does not match its key".to_owned(),
            K::InvalidToken | K::Base64(_) | K::Json(_) | K::Utf8(_) => {
                "the token is not a well-formed JWT".to_owned()
            }
            K::InvalidEcdsaKey | K::InvalidRsaKey(_) | K::InvalidKeyFormat | K::Crypto(_) => {
                "the issuer's key for this token cannot verify it".to_owned()
            }
            _ => "the token does not validate".to_owned(),
        }
    }
}

/// Whether tokens signed with `alg` are taken at all: public-key signatures only.
fn is_taken(alg: Algorithm) -> bool {
    RSA_ALGORITHMS.contains(&alg)
        || matches!(alg, Algorithm::ES256 | Algorithm::ES384 | Algorithm::EdDSA)
}

/// Reads and parses the key set.
async fn load(source: &KeySource) -> Result<Vec<Key>> {
    let doc = match source {
        KeySource::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
                what: format!("{}: reading the key set", source.describe()),
                source: e,
            })?;
            serde_json::from_str(&text).map_err(|e| Error::Json {
                what: format!("{}: the key set is not JSON", source.describe()),
                source: e,
            })?
        }
        KeySource::Url { url, fetch } => (fetch.0)(url.clone(), FETCH_TIMEOUT, MAX_JWKS_BYTES)
            .await
            .map_err(|e| Error::Fetch {
                what: format!("{}: fetching the key set", source.describe()),
                source: e,
            })?,
    };
    key_set(&doc).map_err(|message| Error::KeySet {
        from: source.describe(),
        message,
    })
}

/// The usable keys of a JWK Set (RFC 7517); keys of a kind or use this server does not take
/// are passed over, and a set with none left is an error (what is wrong with it).
fn key_set(doc: &Value) -> Result<Vec<Key>, &'static str> {
    let Some(listed) = doc.get("keys").and_then(Value::as_array) else {
        return Err("not a JWK Set: it has no \"keys\" list");
    };
    let mut keys = Vec::new();
    for value in listed {
        // A key of a type the JWK parser does not know is passed over like any other unusable
        // key: an issuer may publish keys for other uses beside its signing keys.
        let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
            continue;
        };
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            continue;
        }
        let mut algorithms = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => RSA_ALGORITHMS.to_vec(),
            AlgorithmParameters::EllipticCurve(p) => match p.curve {
                EllipticCurve::P256 => vec![Algorithm::ES256],
                EllipticCurve::P384 => vec![Algorithm::ES384],
                _ => continue,
            },
            AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
                vec![Algorithm::EdDSA]
            }
            // Shared secrets, and curves ring does not verify.
            _ => continue,
        };
        if let Some(named) = jwk.common.key_algorithm {
            match algorithm_of(named) {
                Some(alg) if algorithms.contains(&alg) => algorithms = vec![alg],
                _ => continue,
            }
        }
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        keys.push(Key {
            kid: jwk.common.key_id,
            algorithms,
            key,
        });
    }
    if keys.is_empty() {
        return Err(
            "the key set has no key to verify signatures with (RSA, EC P-256 or P-384, or \
             Ed25519, with no other use)",
        );
    }
    Ok(keys)
}

/// The signature algorithm a key's `alg` names; `None` for encryption algorithms.
fn algorithm_of(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

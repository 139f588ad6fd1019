#if Server
import Foundation

/// The OpenAPI 3.1 document of every route, served at `GET /openapi.json`
/// with the server's own URL; `scripts/interop/server_e2e.py` validates it
/// and checks live answers against it.
enum OpenAPIDocument {
    static func json(server: String) -> String {
        template.replacingOccurrences(of: "SERVER_URL", with: server)
    }

    static let template = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "TokenMint server",
  "version": "1.0.0",
  "description": "The WhitelabelPay REST API, the OAuth 2.0 authorization server, the passkey relying party (WebAuthn), the user-token exchange and the health check of `tokenmint serve`. Every error is `{\"error\": code, \"message\": text}`, except at the browser-facing authorization endpoint (`/oauth/authorize`), which answers with HTML pages (or RFC 6749's JSON error for a client that accepts only JSON)."
 },
 "servers": [
  {
   "url": "SERVER_URL"
  }
 ],
 "paths": {
  "/healthz": {
   "get": {
    "operationId": "health",
    "summary": "Liveness",
    "responses": {
     "200": {
      "description": "Serving",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     }
    }
   }
  },
  "/openapi.json": {
   "get": {
    "operationId": "openapi",
    "summary": "This document",
    "responses": {
     "200": {
      "description": "The OpenAPI 3.1 document",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/.well-known/oauth-authorization-server": {
   "get": {
    "operationId": "oauthMetadata",
    "summary": "RFC 8414 metadata",
    "responses": {
     "200": {
      "description": "Metadata",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthMetadata"
        }
       }
      }
     }
    }
   }
  },
  "/oauth/jwks": {
   "get": {
    "operationId": "jwks",
    "summary": "The keys that verify the issuer's access tokens",
    "responses": {
     "200": {
      "description": "JWK Set",
      "content": {
       "application/jwk-set+json": {
        "schema": {
         "$ref": "#/components/schemas/JWKSet"
        }
       }
      }
     }
    }
   }
  },
  "/oauth/authorize": {
   "get": {
    "operationId": "authorize",
    "summary": "Authorization endpoint: the sign-in form (RFC 6749 \u00a74.1, PKCE S256 only)",
    "description": "A valid request gets an HTML sign-in form that posts back here. An unknown client or a redirect URI that is not registered is refused here (400), never redirected; any other error is sent to the redirect URI.",
    "parameters": [
     {
      "name": "response_type",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "enum": [
        "code"
       ]
      },
      "description": "`code` (anything else is sent back as `unsupported_response_type`)"
     },
     {
      "name": "client_id",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 128
      },
      "description": "A registered client"
     },
     {
      "name": "redirect_uri",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 512
      },
      "description": "One of the client's registered redirect URIs, byte for byte (a loopback URI `http://127.0.0.1/...` or `http://[::1]/...` with any port, RFC 8252 \u00a77.3)"
     },
     {
      "name": "code_challenge",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^[A-Za-z0-9_-]{43,128}$"
      },
      "description": "PKCE: BASE64URL(SHA-256(code_verifier)) (RFC 7636)"
     },
     {
      "name": "code_challenge_method",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "enum": [
        "S256"
       ]
      },
      "description": "Only S256"
     },
     {
      "name": "state",
      "in": "query",
      "required": false,
      "schema": {
       "type": "string",
       "maxLength": 512
      },
      "description": "Echoed in the redirect"
     },
     {
      "name": "scope",
      "in": "query",
      "required": false,
      "schema": {
       "type": "string"
      },
      "description": "Space-separated scope tokens (not wlp.desk)"
     }
    ],
    "responses": {
     "200": {
      "description": "The sign-in form",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "303": {
      "description": "An error sent back to the client",
      "headers": {
       "Location": {
        "description": "The client's redirect URI with `code`, `state` and `iss` (RFC 9207), or with `error`, `error_description`, `state` and `iss`",
        "required": true,
        "schema": {
         "type": "string",
         "format": "uri"
        }
       }
      }
     },
     "400": {
      "description": "Unknown client, or a missing or unregistered redirect URI: shown to the user, not redirected",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       },
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     }
    }
   },
   "post": {
    "operationId": "authorizeSignIn",
    "summary": "Authorization endpoint: sign in and get a code",
    "description": "The request is checked again with the credentials. Right ones: 303 to the redirect URI with a single-use code (60 s). Wrong ones: the form again (401).",
    "requestBody": {
     "required": true,
     "content": {
      "application/x-www-form-urlencoded": {
       "schema": {
        "$ref": "#/components/schemas/AuthorizeForm"
       }
      }
     }
    },
    "responses": {
     "303": {
      "description": "The code (or an error) sent back to the client",
      "headers": {
       "Location": {
        "description": "The client's redirect URI with `code`, `state` and `iss` (RFC 9207), or with `error`, `error_description`, `state` and `iss`",
        "required": true,
        "schema": {
         "type": "string",
         "format": "uri"
        }
       }
      }
     },
     "400": {
      "description": "Unknown client, or a missing or unregistered redirect URI, or a malformed form",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       },
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "401": {
      "description": "Wrong username or password: the form again, with a message",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       },
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       },
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "429": {
      "description": "Too many sign-in checks at once: the form again",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/oauth/token": {
   "post": {
    "operationId": "token",
    "summary": "Token endpoint (RFC 6749 \u00a73.2): authorization_code with PKCE, refresh_token (rotated), client_credentials",
    "description": "With a DPoP header (RFC 9449) the tokens are bound to the proof's key: token_type DPoP, cnf.jkt in the access token, the refresh family bound too. A proof that does not hold is answered 400 invalid_dpop_proof.",
    "parameters": [
     {
      "name": "DPoP",
      "in": "header",
      "required": false,
      "description": "A DPoP proof JWT for POST to this endpoint",
      "schema": {
       "type": "string"
      }
     }
    ],
    "security": [
     {},
     {
      "clientBasic": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/x-www-form-urlencoded": {
       "schema": {
        "$ref": "#/components/schemas/TokenRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "Tokens",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/TokenResponse"
        }
       }
      }
     },
     "400": {
      "description": "RFC 6749 error",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "401": {
      "description": "invalid_client",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "429": {
      "description": "Too many secret checks at once (temporarily_unavailable)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     }
    }
   }
  },
  "/oauth/revoke": {
   "post": {
    "operationId": "revoke",
    "summary": "Token revocation (RFC 7009)",
    "description": "Revoking a refresh token revokes its whole family. Access tokens are short-lived JWTs and are not revocable; an unknown token or another client's token changes nothing. A well-formed request is answered 200 with an empty body.",
    "security": [
     {},
     {
      "clientBasic": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/x-www-form-urlencoded": {
       "schema": {
        "$ref": "#/components/schemas/RevokeRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "Revoked, or nothing to revoke (empty body)"
     },
     "400": {
      "description": "invalid_request",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "401": {
      "description": "invalid_client",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     },
     "429": {
      "description": "Too many secret checks at once (temporarily_unavailable)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OAuthError"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices": {
   "post": {
    "operationId": "registerDevice",
    "summary": "A device registers its enrolment token",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/EnrolmentRequest"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Registered",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/DeviceStatus"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "409": {
      "description": "Conflicts with what the server holds",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/enrolments": {
   "post": {
    "operationId": "enrol",
    "summary": "A cash desk enrols a scanned enrolment token",
    "security": [
     {
      "deskToken": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/DeskEnrolmentRequest"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Enrolled",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Enrolment"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "Credentials that may not do this",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "409": {
      "description": "Conflicts with what the server holds",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}": {
   "get": {
    "operationId": "deviceStatus",
    "summary": "What a device syncs before it acts",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     }
    ],
    "responses": {
     "200": {
      "description": "The device",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/DeviceStatus"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "The server does not know the device (invalidEnrolmentInstance: the SDK wipes itself) or the resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/events": {
   "get": {
    "operationId": "deviceEvents",
    "summary": "Push payloads as server-sent events",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     },
     {
      "name": "Last-Event-ID",
      "in": "header",
      "required": false,
      "schema": {
       "type": "string",
       "pattern": "^[0-9]{1,18}$"
      }
     },
     {
      "name": "after",
      "in": "query",
      "required": false,
      "schema": {
       "type": "string",
       "pattern": "^[0-9]{1,18}$"
      }
     }
    ],
    "responses": {
     "200": {
      "description": "An event stream: `id`, `event` (the yp-type), `data` (the push payload)",
      "content": {
       "text/event-stream": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "The server does not know the device (invalidEnrolmentInstance: the SDK wipes itself) or the resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "description": "The server holds as many event streams as it takes",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/payment-means": {
   "get": {
    "operationId": "paymentMeans",
    "summary": "The device's payment means",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     }
    ],
    "responses": {
     "200": {
      "description": "Payment means",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/PaymentMeansList"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "The server does not know the device (invalidEnrolmentInstance: the SDK wipes itself) or the resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/payment-means/{meansId}/deactivate": {
   "post": {
    "operationId": "deactivateMeans",
    "summary": "Deactivates a payment means",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     },
     {
      "name": "meansId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^[A-Za-z0-9-]{1,64}$"
      }
     }
    ],
    "responses": {
     "200": {
      "description": "Payment means",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/PaymentMeansList"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "No such device or resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/payment-means/{meansId}/reactivate": {
   "post": {
    "operationId": "reactivateMeans",
    "summary": "Makes a payment means the active one",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     },
     {
      "name": "meansId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^[A-Za-z0-9-]{1,64}$"
      }
     }
    ],
    "responses": {
     "200": {
      "description": "Payment means",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/PaymentMeansList"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "No such device or resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/unsigned-tokens": {
   "post": {
    "operationId": "unsignedToken",
    "summary": "The online unsigned part of a payment token",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     }
    ],
    "requestBody": {
     "required": false,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/UnsignedTokenRequest"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Issued",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/UnsignedToken"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "No such device or resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/devices/{subjectId}/offline-grants": {
   "post": {
    "operationId": "offlineGrant",
    "summary": "The device's next offline counter values",
    "security": [
     {
      "deviceJWT": []
     }
    ],
    "parameters": [
     {
      "name": "subjectId",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string",
       "maxLength": 64
      }
     }
    ],
    "requestBody": {
     "required": false,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/GrantRequest"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Granted",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/OfflineGrant"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "No such device or resource",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/payments": {
   "post": {
    "operationId": "pay",
    "summary": "A cash desk presents a scanned payment token",
    "security": [
     {
      "deskToken": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PaymentRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "Accepted",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Transaction"
        }
       }
      }
     },
     "409": {
      "description": "Refused (replayed, expired, unknown device, over the offline grant, \u2026) or an attemptId of another payment",
      "content": {
       "application/json": {
        "schema": {
         "anyOf": [
          {
           "$ref": "#/components/schemas/Refusal"
          },
          {
           "$ref": "#/components/schemas/Error"
          }
         ]
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "Credentials that may not do this",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/wlp/v1/transactions": {
   "get": {
    "operationId": "transactions",
    "summary": "Accepted payments: a device's own, or all for a desk",
    "security": [
     {
      "deviceJWT": []
     },
     {
      "deskToken": []
     }
    ],
    "parameters": [
     {
      "name": "page",
      "in": "query",
      "required": false,
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 1000000,
       "default": 1
      }
     },
     {
      "name": "size",
      "in": "query",
      "required": false,
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 100,
       "default": 20
      }
     },
     {
      "name": "sort",
      "in": "query",
      "required": false,
      "style": "form",
      "explode": true,
      "schema": {
       "type": "array",
       "maxItems": 5,
       "items": {
        "type": "string",
        "pattern": "^(createdAt|amount|currency|transactionId|paymentMeansId)(,(asc|desc))?$"
       }
      }
     }
    ],
    "responses": {
     "200": {
      "description": "One page",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/TransactionPage"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "No credentials, or credentials that do not verify",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "Credentials that may not do this",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/v2/user_token": {
   "post": {
    "operationId": "userToken",
    "summary": "Exchange a user's access token for a user token (IFTTT's service-key exchange)",
    "description": "A partner backend presents its service key in the IFTTT-Service-Key header and a user's access token; the answer is a user token scoped to that user. The user ID and the access token go in the JSON body (never in the URL). Without a service key configured on the server the route answers 404.",
    "security": [
     {
      "serviceKey": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/UserTokenRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The user token (Cache-Control: no-store)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/UserToken"
        }
       }
      }
     },
     "400": {
      "description": "Bad request: malformed JSON, a missing or out-of-range field",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "serviceKeyInvalid: no or a wrong service key; accessTokenInvalid: the access token does not verify, is another user's or is a client's",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "The server has no service key: the exchange is not configured",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "Body too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "Wrong content type",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/passkeys/": {
   "get": {
    "operationId": "passkeyPage",
    "summary": "The passkey page (HTML)",
    "description": "A plain HTML page that loads `passkeys.js` and exposes `window.tokenmint` with `register(username)`, `signIn(username?)`, `stepUp()` and `signOut()`.",
    "responses": {
     "200": {
      "description": "The page",
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/passkeys/tokenmint-webauthn.js": {
   "get": {
    "operationId": "passkeyLibrary",
    "summary": "The browser client (an ES module)",
    "description": "Dependency-free: base64url and ArrayBuffer, options JSON to `navigator.credentials`, `PublicKeyCredential.toJSON()` where present, and a client of the `/webauthn/` routes.",
    "responses": {
     "200": {
      "description": "The module",
      "content": {
       "text/javascript": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/passkeys/passkeys.js": {
   "get": {
    "operationId": "passkeyPageScript",
    "summary": "The script of the passkey page and of the sign-in form's passkey button",
    "responses": {
     "200": {
      "description": "The module",
      "content": {
       "text/javascript": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/webauthn/registration/options": {
   "post": {
    "operationId": "passkeyRegistrationOptions",
    "summary": "Options for creating a passkey",
    "description": "For a new account (a sign-up) nothing more is needed. A passkey for an existing account takes proof that the caller owns it: the account's password in the body, a bearer token from a passkey sign-in of the last five minutes, or the account's elevated token; otherwise 409 accountExists. Resident key and user verification are required; the account's passkeys are excluded.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PasskeyRegistrationRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "PublicKeyCredentialCreationOptionsJSON",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/CreationOptions"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "A bearer token that does not verify, or a wrong password",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "A desk's token names no account",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "409": {
      "description": "accountExists: the account exists and the request does not carry its token",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    },
    "security": [
     {},
     {
      "accountToken": []
     }
    ]
   }
  },
  "/webauthn/registration/verify": {
   "post": {
    "operationId": "passkeyRegistration",
    "summary": "Verify and store a new passkey",
    "description": "The credential as `PublicKeyCredential.toJSON()` gives it, over a challenge of the options route for the same username (single use, 5 minutes). A sign-up's challenge registers only while the name is free.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PasskeyRegistration"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The passkey is registered",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RegisteredPasskey"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "The bearer token, challenge or assertion does not verify (the error names which: challengeInvalid, wrongAccount, assertionInvalid, unauthorized)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "A desk's token names no account",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "409": {
      "description": "accountExists or credentialExists",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/webauthn/authentication/options": {
   "post": {
    "operationId": "passkeySignInOptions",
    "summary": "Options for a passkey sign-in",
    "description": "With a username, its credentials are listed in allowCredentials; without one, the browser offers the discoverable credentials it holds for this RP.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PasskeySignInRequest"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "PublicKeyCredentialRequestOptionsJSON",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RequestOptions"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/webauthn/authentication/verify": {
   "post": {
    "operationId": "passkeySignIn",
    "summary": "Verify a passkey sign-in",
    "description": "The assertion as `PublicKeyCredential.toJSON()` gives it. Answers with an RFC 9068 access token of the server's issuer (client `tokenmint-passkeys`, no refresh token).",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PasskeyAssertion"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "Signed in",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/PasskeySignIn"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "The bearer token, challenge or assertion does not verify (the error names which: challengeInvalid, wrongAccount, assertionInvalid, unauthorized)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  },
  "/webauthn/step-up/options": {
   "post": {
    "operationId": "stepUpOptions",
    "summary": "Options for a step-up",
    "description": "For the account of the bearer token, which must have a passkey.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/Empty"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "PublicKeyCredentialRequestOptionsJSON",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/RequestOptions"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "The bearer token, challenge or assertion does not verify (the error names which: challengeInvalid, wrongAccount, assertionInvalid, unauthorized)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "A desk's token, or an account without a passkey",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    },
    "security": [
     {
      "accountToken": []
     }
    ]
   }
  },
  "/webauthn/step-up/verify": {
   "post": {
    "operationId": "stepUp",
    "summary": "Turn an assertion into an elevated token",
    "description": "An assertion by a passkey of the bearer token's account over a step-up challenge: an elevated access token (scope `elevated`, `acr` urn:tokenmint:acr:fido2, `amr`), never refreshed.",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/PasskeyAssertion"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "Elevated",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/ElevatedToken"
        }
       }
      }
     },
     "400": {
      "description": "The body is not the JSON the route takes, or a field is malformed",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "413": {
      "description": "The body is too large",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "415": {
      "description": "The body is not application/json",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "401": {
      "description": "The bearer token, challenge or assertion does not verify (the error names which: challengeInvalid, wrongAccount, assertionInvalid, unauthorized)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "403": {
      "description": "A desk's token, or an account without a passkey",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    },
    "security": [
     {
      "accountToken": []
     }
    ]
   }
  },
  "/.well-known/webauthn": {
   "get": {
    "operationId": "webauthnRelatedOrigins",
    "summary": "The related origins of this WebAuthn relying party (WebAuthn L3 \u00a75.11.1)",
    "responses": {
     "200": {
      "description": "The origins (--related-origin) browsers may accept for this RP ID",
      "content": {
       "application/json": {
        "schema": {
         "type": "object",
         "required": [
          "origins"
         ],
         "properties": {
          "origins": {
           "type": "array",
           "items": {
            "type": "string"
           }
          }
         }
        }
       }
      }
     },
     "404": {
      "description": "No related origins are configured",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   }
  }
 },
 "components": {
  "securitySchemes": {
   "deviceJWT": {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "JWT",
    "description": "EdDSA JWT signed with the device's enrolment key: sub = subjectId, aud = the server, azp, iat, exp (at most 60 s later), jti (used once)."
   },
   "deskToken": {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "JWT",
    "description": "An RFC 9068 access token from the client-credentials grant with scope wlp.desk."
   },
   "clientBasic": {
    "type": "http",
    "scheme": "basic"
   },
   "serviceKey": {
    "type": "apiKey",
    "in": "header",
    "name": "IFTTT-Service-Key",
    "description": "The partner backend's secret service key (the server's --service-key-file), compared in constant time. It speaks for every user: send it from a backend, never from an app."
   },
   "accountToken": {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "JWT",
    "description": "An account's RFC 9068 access token from this server (a sign-in, or the code flow)."
   }
  },
  "schemas": {
   "Error": {
    "type": "object",
    "required": [
     "error",
     "message"
    ],
    "properties": {
     "error": {
      "type": "string"
     },
     "message": {
      "type": "string"
     }
    }
   },
   "OAuthError": {
    "type": "object",
    "required": [
     "error"
    ],
    "properties": {
     "error": {
      "type": "string",
      "enum": [
       "invalid_request",
       "invalid_client",
       "invalid_grant",
       "unauthorized_client",
       "unsupported_grant_type",
       "invalid_scope",
       "server_error",
       "unsupported_response_type",
       "unsupported_token_type",
       "temporarily_unavailable"
      ]
     },
     "error_description": {
      "type": "string"
     },
     "message": {
      "type": "string"
     }
    }
   },
   "Health": {
    "type": "object",
    "required": [
     "status"
    ],
    "properties": {
     "status": {
      "const": "ok"
     },
     "time": {
      "type": "integer"
     }
    }
   },
   "OAuthMetadata": {
    "type": "object",
    "required": [
     "issuer",
     "token_endpoint",
     "jwks_uri"
    ],
    "properties": {
     "issuer": {
      "type": "string"
     },
     "token_endpoint": {
      "type": "string"
     },
     "jwks_uri": {
      "type": "string"
     },
     "authorization_endpoint": {
      "type": "string"
     },
     "revocation_endpoint": {
      "type": "string"
     },
     "response_types_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "response_modes_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "code_challenge_methods_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "grant_types_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "token_endpoint_auth_methods_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "revocation_endpoint_auth_methods_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "scopes_supported": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "authorization_response_iss_parameter_supported": {
      "type": "boolean"
     }
    }
   },
   "JWKSet": {
    "type": "object",
    "required": [
     "keys"
    ],
    "properties": {
     "keys": {
      "type": "array",
      "items": {
       "type": "object",
       "required": [
        "kty"
       ]
      }
     }
    }
   },
   "TokenRequest": {
    "type": "object",
    "required": [
     "grant_type"
    ],
    "properties": {
     "grant_type": {
      "type": "string",
      "enum": [
       "authorization_code",
       "refresh_token",
       "client_credentials"
      ]
     },
     "scope": {
      "type": "string"
     },
     "client_id": {
      "type": "string"
     },
     "client_secret": {
      "type": "string"
     },
     "code": {
      "type": "string",
      "description": "authorization_code: the code from the redirect"
     },
     "redirect_uri": {
      "type": "string",
      "description": "authorization_code: the redirect URI of the authorization request"
     },
     "code_verifier": {
      "type": "string",
      "pattern": "^[A-Za-z0-9._~-]{43,128}$",
      "description": "authorization_code: the PKCE verifier"
     },
     "refresh_token": {
      "type": "string",
      "description": "refresh_token: the refresh token (single use: rotated)"
     }
    }
   },
   "TokenResponse": {
    "type": "object",
    "required": [
     "access_token",
     "token_type",
     "expires_in"
    ],
    "properties": {
     "access_token": {
      "type": "string"
     },
     "token_type": {
      "enum": ["Bearer", "DPoP"],
      "description": "DPoP when the request carried a DPoP proof (RFC 9449): the token is bound to its key (cnf.jkt)"
     },
     "expires_in": {
      "type": "integer"
     },
     "scope": {
      "type": "string"
     },
     "refresh_token": {
      "type": "string"
     }
    }
   },
   "EnrolmentRequest": {
    "type": "object",
    "required": [
     "enrolmentToken"
    ],
    "properties": {
     "enrolmentToken": {
      "type": "string",
      "maxLength": 256
     }
    }
   },
   "DeskEnrolmentRequest": {
    "type": "object",
    "required": [
     "enrolmentToken"
    ],
    "properties": {
     "enrolmentToken": {
      "type": "string",
      "maxLength": 256
     },
     "paymentMeansId": {
      "type": "string",
      "pattern": "^[A-Za-z0-9-]{1,64}$"
     }
    }
   },
   "Enrolment": {
    "type": "object",
    "required": [
     "subjectId",
     "status",
     "paymentMeansId"
    ],
    "properties": {
     "subjectId": {
      "type": "string"
     },
     "status": {
      "const": "enrolled"
     },
     "paymentMeansId": {
      "type": "string"
     }
    }
   },
   "PaymentMeans": {
    "type": "object",
    "required": [
     "id",
     "active"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "active": {
      "type": "boolean"
     }
    }
   },
   "PaymentMeansList": {
    "type": "object",
    "required": [
     "paymentMeans"
    ],
    "properties": {
     "paymentMeans": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/PaymentMeans"
      }
     }
    }
   },
   "DeviceStatus": {
    "type": "object",
    "required": [
     "subjectId",
     "status",
     "serverTime"
    ],
    "properties": {
     "subjectId": {
      "type": "string"
     },
     "status": {
      "enum": [
       "pending",
       "enrolled"
      ]
     },
     "serverTime": {
      "type": "integer"
     },
     "paymentMeans": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/PaymentMeans"
      }
     }
    }
   },
   "UnsignedTokenRequest": {
    "type": "object",
    "properties": {
     "paymentMeansId": {
      "type": "string",
      "pattern": "^[A-Za-z0-9-]{1,64}$"
     }
    }
   },
   "UnsignedToken": {
    "type": "object",
    "required": [
     "unsignedToken",
     "paymentMeansId",
     "serverTime"
    ],
    "properties": {
     "unsignedToken": {
      "type": "string"
     },
     "paymentMeansId": {
      "type": "string"
     },
     "serverTime": {
      "type": "integer"
     }
    }
   },
   "GrantRequest": {
    "type": "object",
    "properties": {
     "count": {
      "type": "integer",
      "minimum": 1
     }
    }
   },
   "OfflineGrant": {
    "type": "object",
    "required": [
     "first",
     "count",
     "notAfter",
     "serverTime"
    ],
    "properties": {
     "first": {
      "type": "integer"
     },
     "count": {
      "type": "integer"
     },
     "notAfter": {
      "type": "integer"
     },
     "serverTime": {
      "type": "integer"
     }
    }
   },
   "Amount": {
    "type": "object",
    "required": [
     "value",
     "currency"
    ],
    "properties": {
     "value": {
      "type": "integer",
      "minimum": 1,
      "maximum": 99999999999
     },
     "currency": {
      "type": "string",
      "pattern": "^[A-Z]{3}$"
     }
    }
   },
   "PaymentRequest": {
    "type": "object",
    "required": [
     "paymentToken",
     "amount",
     "attemptId"
    ],
    "properties": {
     "paymentToken": {
      "type": "string",
      "maxLength": 512
     },
     "amount": {
      "$ref": "#/components/schemas/Amount"
     },
     "attemptId": {
      "type": "string",
      "minLength": 1,
      "maxLength": 128
     }
    }
   },
   "Transaction": {
    "type": "object",
    "required": [
     "transactionId",
     "subjectId",
     "paymentMeansId",
     "amount",
     "status",
     "createdAt"
    ],
    "properties": {
     "transactionId": {
      "type": "string"
     },
     "subjectId": {
      "type": "string"
     },
     "paymentMeansId": {
      "type": "string"
     },
     "amount": {
      "$ref": "#/components/schemas/Amount"
     },
     "status": {
      "const": "accepted"
     },
     "createdAt": {
      "type": "integer"
     }
    }
   },
   "Refusal": {
    "type": "object",
    "required": [
     "status",
     "error",
     "message"
    ],
    "properties": {
     "status": {
      "const": "refused"
     },
     "error": {
      "type": "string"
     },
     "message": {
      "type": "string"
     }
    }
   },
   "TransactionPage": {
    "type": "object",
    "required": [
     "content",
     "page",
     "size",
     "totalElements",
     "totalPages",
     "sort"
    ],
    "properties": {
     "content": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Transaction"
      }
     },
     "page": {
      "type": "integer"
     },
     "size": {
      "type": "integer"
     },
     "totalElements": {
      "type": "integer"
     },
     "totalPages": {
      "type": "integer"
     },
     "sort": {
      "type": "array",
      "items": {
       "type": "string"
      }
     }
    }
   },
   "AuthorizeForm": {
    "type": "object",
    "description": "The sign-in form: the authorization request's parameters (as in the GET) with the account's credentials Either username and password, or passkey.",
    "required": [
     "response_type",
     "client_id",
     "redirect_uri",
     "code_challenge",
     "code_challenge_method"
    ],
    "properties": {
     "response_type": {
      "type": "string",
      "enum": [
       "code"
      ]
     },
     "client_id": {
      "type": "string",
      "maxLength": 128
     },
     "redirect_uri": {
      "type": "string",
      "maxLength": 512
     },
     "code_challenge": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]{43,128}$"
     },
     "code_challenge_method": {
      "type": "string",
      "enum": [
       "S256"
      ]
     },
     "state": {
      "type": "string",
      "maxLength": 512
     },
     "scope": {
      "type": "string"
     },
     "username": {
      "type": "string",
      "maxLength": 64
     },
     "password": {
      "type": "string",
      "format": "password",
      "maxLength": 1024
     },
     "passkey": {
      "type": "string",
      "description": "Instead of username and password: a passkey assertion (`PublicKeyCredential.toJSON()` as JSON text) over a challenge of POST /webauthn/authentication/options"
     }
    }
   },
   "RevokeRequest": {
    "type": "object",
    "required": [
     "token"
    ],
    "properties": {
     "token": {
      "type": "string"
     },
     "token_type_hint": {
      "type": "string",
      "enum": [
       "refresh_token",
       "access_token"
      ]
     },
     "client_id": {
      "type": "string"
     },
     "client_secret": {
      "type": "string"
     }
    }
   },
   "UserTokenRequest": {
    "type": "object",
    "required": [
     "user_id",
     "access_token"
    ],
    "properties": {
     "user_id": {
      "type": "string",
      "minLength": 1,
      "maxLength": 128,
      "description": "The user, as the subject (sub) of the access token"
     },
     "access_token": {
      "type": "string",
      "minLength": 1,
      "maxLength": 4096,
      "description": "An RFC 9068 access token this server's OAuth issuer gave for the user (not a client-credentials token)"
     }
    }
   },
   "UserToken": {
    "type": "object",
    "required": [
     "type",
     "user_token"
    ],
    "properties": {
     "type": {
      "type": "string",
      "enum": [
       "user_token"
      ]
     },
     "user_token": {
      "type": "string",
      "description": "An opaque token scoped to the user; the server keeps only its hash"
     }
    }
   },
   "Empty": {
    "type": "object"
   },
   "PasskeyRegistrationRequest": {
    "type": "object",
    "required": [
     "username"
    ],
    "properties": {
     "username": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64,
      "description": "1 to 64 visible ASCII characters"
     },
     "displayName": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64
     },
     "password": {
      "type": "string",
      "minLength": 1,
      "maxLength": 1024,
      "description": "The account's password: proof of ownership for adding a passkey to an existing password account"
     }
    }
   },
   "PasskeySignInRequest": {
    "type": "object",
    "properties": {
     "username": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64,
      "description": "1 to 64 visible ASCII characters"
     }
    }
   },
   "CreationOptions": {
    "type": "object",
    "required": [
     "rp",
     "user",
     "challenge",
     "pubKeyCredParams",
     "timeout",
     "excludeCredentials",
     "authenticatorSelection",
     "attestation"
    ],
    "properties": {
     "rp": {
      "type": "object",
      "required": [
       "id",
       "name"
      ],
      "properties": {
       "id": {
        "type": "string"
       },
       "name": {
        "type": "string"
       }
      }
     },
     "user": {
      "type": "object",
      "required": [
       "id",
       "name",
       "displayName"
      ],
      "properties": {
       "id": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]+$"
       },
       "name": {
        "type": "string"
       },
       "displayName": {
        "type": "string"
       }
      }
     },
     "challenge": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]+$"
     },
     "pubKeyCredParams": {
      "type": "array",
      "items": {
       "type": "object",
       "required": [
        "type",
        "alg"
       ],
       "properties": {
        "type": {
         "const": "public-key"
        },
        "alg": {
         "type": "integer"
        }
       }
      }
     },
     "timeout": {
      "type": "integer"
     },
     "excludeCredentials": {
      "type": "array",
      "items": {
       "type": "object",
       "required": [
        "type",
        "id"
       ],
       "properties": {
        "type": {
         "const": "public-key"
        },
        "id": {
         "type": "string",
         "pattern": "^[A-Za-z0-9_-]+$"
        }
       }
      }
     },
     "authenticatorSelection": {
      "type": "object"
     },
     "attestation": {
      "type": "string"
     },
     "extensions": {
      "type": "object"
     },
     "hints": {
      "$ref": "#/components/schemas/Hints"
     }
    }
   },
   "RequestOptions": {
    "type": "object",
    "required": [
     "challenge",
     "rpId",
     "timeout",
     "allowCredentials",
     "userVerification"
    ],
    "properties": {
     "challenge": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]+$"
     },
     "rpId": {
      "type": "string"
     },
     "timeout": {
      "type": "integer"
     },
     "allowCredentials": {
      "type": "array",
      "items": {
       "type": "object",
       "required": [
        "type",
        "id"
       ],
       "properties": {
        "type": {
         "const": "public-key"
        },
        "id": {
         "type": "string",
         "pattern": "^[A-Za-z0-9_-]+$"
        }
       }
      }
     },
     "userVerification": {
      "const": "required"
     },
     "hints": {
      "$ref": "#/components/schemas/Hints"
     }
    }
   },
   "PublicKeyCredentialJSON": {
    "type": "object",
    "required": [
     "id",
     "rawId",
     "type",
     "response"
    ],
    "description": "`PublicKeyCredential.toJSON()`: every byte string base64url.",
    "properties": {
     "id": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]+$"
     },
     "rawId": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]+$"
     },
     "type": {
      "const": "public-key"
     },
     "authenticatorAttachment": {
      "type": [
       "string",
       "null"
      ]
     },
     "clientExtensionResults": {
      "type": "object",
      "description": "The client's extension results. Known ones are checked (credProps.rk, prf.enabled, largeBlob.supported and written are Booleans); PRF outputs (prf.results) and large blobs (largeBlob.blob) are the page's and are refused with 400.",
      "properties": {
       "credProps": {
        "type": "object",
        "properties": {
         "rk": {
          "type": "boolean"
         }
        }
       },
       "prf": {
        "type": "object",
        "properties": {
         "enabled": {
          "type": "boolean"
         }
        }
       },
       "largeBlob": {
        "type": "object",
        "properties": {
         "supported": {
          "type": "boolean"
         },
         "written": {
          "type": "boolean"
         }
        }
       }
      }
     },
     "response": {
      "type": "object",
      "required": [
       "clientDataJSON"
      ],
      "properties": {
       "clientDataJSON": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]+$"
       },
       "attestationObject": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]+$"
       },
       "authenticatorData": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]+$"
       },
       "signature": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]+$"
       },
       "userHandle": {
        "type": [
         "string",
         "null"
        ]
       },
       "transports": {
        "type": "array",
        "items": {
         "type": "string"
        }
       }
      }
     }
    }
   },
   "PasskeyRegistration": {
    "type": "object",
    "required": [
     "username",
     "credential"
    ],
    "properties": {
     "username": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64,
      "description": "1 to 64 visible ASCII characters"
     },
     "credential": {
      "$ref": "#/components/schemas/PublicKeyCredentialJSON"
     }
    }
   },
   "PasskeyAssertion": {
    "type": "object",
    "required": [
     "credential"
    ],
    "properties": {
     "credential": {
      "$ref": "#/components/schemas/PublicKeyCredentialJSON"
     }
    }
   },
   "RegisteredPasskey": {
    "type": "object",
    "required": [
     "verified",
     "username",
     "credentialId",
     "attestationFormat",
     "userVerified",
     "backupEligible",
     "signCount",
     "attestationTrust"
    ],
    "properties": {
     "verified": {
      "const": true
     },
     "username": {
      "type": "string"
     },
     "credentialId": {
      "type": "string",
      "pattern": "^[A-Za-z0-9_-]+$"
     },
     "attestationFormat": {
      "type": "string"
     },
     "userVerified": {
      "type": "boolean"
     },
     "backupEligible": {
      "type": "boolean"
     },
     "signCount": {
      "type": "integer"
     },
     "discoverable": {
      "type": "boolean",
      "description": "The client's credProps.rk, when it reported it."
     },
     "prfEnabled": {
      "type": "boolean",
      "description": "The client's prf.enabled, when it reported it."
     },
     "attestationTrust": {
      "enum": [
       "uncertified",
       "anchored",
       "unanchored"
      ],
      "description": "uncertified: attestation none or packed self; anchored: its certificates chain to a configured root; unanchored: they verify but reach no root, accepted because the server runs with --accept-unanchored-attestation."
     }
    }
   },
   "PasskeySignIn": {
    "type": "object",
    "required": [
     "verified",
     "username",
     "signCount",
     "userVerified",
     "accessToken",
     "tokenType",
     "expiresAt"
    ],
    "properties": {
     "verified": {
      "const": true
     },
     "username": {
      "type": "string"
     },
     "signCount": {
      "type": "integer"
     },
     "userVerified": {
      "type": "boolean"
     },
     "accessToken": {
      "type": "string"
     },
     "tokenType": {
      "const": "Bearer"
     },
     "expiresAt": {
      "type": "integer",
      "description": "Unix seconds"
     }
    },
    "description": "An access token only (no refresh token): the passkey page is no registered OAuth client"
   },
   "ElevatedToken": {
    "type": "object",
    "required": [
     "verified",
     "elevated",
     "username",
     "accessToken",
     "tokenType",
     "scope",
     "expiresAt"
    ],
    "properties": {
     "verified": {
      "const": true
     },
     "elevated": {
      "const": true
     },
     "username": {
      "type": "string"
     },
     "accessToken": {
      "type": "string"
     },
     "tokenType": {
      "const": "Bearer"
     },
     "scope": {
      "const": "elevated"
     },
     "expiresAt": {
      "type": "integer"
     }
    }
   },
   "Hints": {
    "description": "WebAuthn L3 hints: the authenticators the ceremony suggests, in order (--hint)",
    "type": "array",
    "items": {
     "type": "string",
     "enum": [
      "security-key",
      "client-device",
      "hybrid"
     ]
    }
   }
  }
 }
}
"""#
}
#endif

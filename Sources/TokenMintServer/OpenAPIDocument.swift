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
  "description": "The WhitelabelPay REST API, the OAuth 2.0 authorization server and the health check of `tokenmint serve`. Every error is `{\"error\": code, \"message\": text}`."
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
  "/oauth/token": {
   "post": {
    "operationId": "token",
    "summary": "Token endpoint (RFC 6749 \u00a73.2)",
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
         "oneOf": [
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
       "server_error"
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
      "type": "string"
     },
     "scope": {
      "type": "string"
     },
     "client_id": {
      "type": "string"
     },
     "client_secret": {
      "type": "string"
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
      "const": "Bearer"
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
   }
  }
 }
}
"""#
}
#endif

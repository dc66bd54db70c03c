import NIOCore

// Generated from docs/openapi.json by scripts/embed-openapi.sh; edit that file and run the script.

/// The OpenAPI 3.1 document of the API, served at `GET /openapi.json`: `docs/openapi.json`, embedded so that a
/// copied binary needs no resource bundle. `OpenAPIDocumentTests` checks that the two are the same bytes, that
/// every path in it is routed, and that real responses match its schemas.
public enum OpenAPIDocument {
    public static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "iqscore serve",
    "version": "1.0.0",
    "description": "Scoring, adaptive testing and fixed forms from one item bank, over HTTP/JSON. Stateless: every request carries what it needs. Errors are application/problem+json (RFC 9457); unknown paths get 404 and other methods on these paths 405 (with Allow), also as problems. Every response carries the bank version in X-Bank-Version. Every response also carries X-Request-Id and X-IQScore-Instance. With tokens configured the API's endpoints need Authorization: Bearer TOKEN; the probes (/livez, /readyz, /healthz), /metrics and this document never do."
  },
  "paths": {
    "/v1/score": {
      "post": {
        "operationId": "score",
        "summary": "Score a finished session",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ScoreRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The score.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Score"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "413": {
            "$ref": "#/components/responses/Problem413"
          },
          "417": {
            "$ref": "#/components/responses/Problem417"
          },
          "422": {
            "$ref": "#/components/responses/Problem422"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        },
        "security": [
          {
            "bearer": []
          },
          {}
        ]
      }
    },
    "/v1/score/batch": {
      "post": {
        "operationId": "scoreBatch",
        "summary": "Score many sessions; a bad session is rejected alone",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/BatchRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Scores and rejects.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/BatchResponse"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "413": {
            "$ref": "#/components/responses/Problem413"
          },
          "417": {
            "$ref": "#/components/responses/Problem417"
          },
          "422": {
            "$ref": "#/components/responses/Problem422"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        },
        "security": [
          {
            "bearer": []
          },
          {}
        ]
      }
    },
    "/v1/cat/next": {
      "post": {
        "operationId": "catNext",
        "summary": "The next step of an adaptive test, from its history (stateless)",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/CATNextRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The next item, or the end of the test with its score.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/CATStep"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "413": {
            "$ref": "#/components/responses/Problem413"
          },
          "417": {
            "$ref": "#/components/responses/Problem417"
          },
          "422": {
            "$ref": "#/components/responses/Problem422"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        },
        "security": [
          {
            "bearer": []
          },
          {}
        ]
      }
    },
    "/v1/forms": {
      "post": {
        "operationId": "assembleForm",
        "summary": "Assemble one fixed form to a blueprint",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/FormsRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The form.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Form"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "413": {
            "$ref": "#/components/responses/Problem413"
          },
          "417": {
            "$ref": "#/components/responses/Problem417"
          },
          "422": {
            "$ref": "#/components/responses/Problem422"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        },
        "security": [
          {
            "bearer": []
          },
          {}
        ]
      }
    },
    "/v1/bank": {
      "get": {
        "operationId": "bank",
        "summary": "The served bank",
        "responses": {
          "200": {
            "description": "The bank's version, size, model and domains.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Bank"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          }
        },
        "security": [
          {
            "bearer": []
          },
          {}
        ]
      }
    },
    "/livez": {
      "get": {
        "operationId": "live",
        "summary": "Liveness: the process answers",
        "responses": {
          "200": {
            "description": "Alive (for a container's liveness probe; never depends on the bank).",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Live"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          }
        }
      }
    },
    "/readyz": {
      "get": {
        "operationId": "ready",
        "summary": "Readiness: a verified bank is loaded and the server is not draining",
        "responses": {
          "200": {
            "description": "Ready for requests (for a load balancer's health check).",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Ready"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        }
      }
    },
    "/healthz": {
      "get": {
        "operationId": "health",
        "summary": "Liveness, with the bank version and exposure control",
        "responses": {
          "200": {
            "description": "Serving.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Health"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "Prometheus metrics",
        "responses": {
          "200": {
            "description": "Prometheus text format 0.0.4.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
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
            "description": "The OpenAPI 3.1 document.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          }
        }
      }
    },
    "/v1/admin/reload": {
      "post": {
        "operationId": "reload",
        "summary": "Re-read the bank, configuration and tokens files (admin token)",
        "description": "Needs an admin bearer token (401 without a valid one, 403 for a scoring token); with no admin token configured the endpoint is off (403), because a proxy on the same host would relay anyone's request from the loopback address: send SIGHUP instead. A file that fails to load is refused (422) and the previous bank keeps serving.",
        "responses": {
          "200": {
            "description": "The new bank is served.",
            "headers": {
              "X-Bank-Version": {
                "$ref": "#/components/headers/BankVersion"
              },
              "X-Request-Id": {
                "$ref": "#/components/headers/RequestId"
              },
              "X-IQScore-Instance": {
                "$ref": "#/components/headers/Instance"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Reload"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Problem400"
          },
          "401": {
            "$ref": "#/components/responses/Problem401"
          },
          "403": {
            "$ref": "#/components/responses/Problem403"
          },
          "408": {
            "$ref": "#/components/responses/Problem408"
          },
          "417": {
            "$ref": "#/components/responses/Problem417"
          },
          "422": {
            "$ref": "#/components/responses/Problem422"
          },
          "429": {
            "$ref": "#/components/responses/Problem429"
          },
          "431": {
            "$ref": "#/components/responses/Problem431"
          },
          "503": {
            "$ref": "#/components/responses/Problem503"
          }
        },
        "security": [
          {
            "bearer": []
          }
        ]
      }
    }
  },
  "components": {
    "schemas": {
      "ScoreRequest": {
        "type": "object",
        "properties": {
          "session_id": {
            "type": [
              "string",
              "integer",
              "null"
            ],
            "description": "Echoed in the score, as a string: a whole number (a database key) is taken as its digits, so 8812 is echoed as \"8812\"."
          },
          "item_ids": {
            "type": "array",
            "items": {
              "type": "string"
            },
            "maxItems": 10000,
            "description": "Answered items, in any order, each once (at most --max-items-per-session, default 1,000)."
          },
          "responses": {
            "type": "array",
            "items": {
              "type": [
                "integer",
                "boolean"
              ],
              "minimum": 0,
              "maximum": 255
            },
            "maxItems": 10000,
            "description": "One per item id, written as a JSON integer: 1 (or true) correct, 0 (or false) incorrect for a right/wrong item; the category 0…K−1 for an item scored in K categories (graded, partial-credit, nominal rows of the bank). A value outside the item's categories is refused with 422 invalid-response naming the field, as are 1.0, 01 and \"1\"."
          },
          "method": {
            "type": [
              "string",
              "null"
            ],
            "enum": [
              "eap",
              "map",
              "ml",
              "wle",
              null
            ],
            "description": "Estimator (default: the server's --method)."
          },
          "age": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "maximum": 130,
            "description": "The person's age in years. Required when the server's norms are age-specific (a NORMS.json from `iqscore norms build`; `GET /v1/bank` names them): the IQ, interval and percentile are then those of the person's age group, and an age outside the ages the norms cover is scored at the nearest covered age and flagged `age_outside_norms`. With linear norms it is checked and echoed."
          },
          "seconds": {
            "type": [
              "array",
              "null"
            ],
            "items": {
              "type": [
                "number",
                "null"
              ],
              "minimum": 0.001,
              "maximum": 86400
            },
            "maxItems": 10000,
            "description": "Each response's time in seconds, one per item id (null: not recorded), as the app measured it. Needs a bank calibrated with response times (`GET /v1/bank` says `response_times: true`): the times then add their information about θ (the speed–accuracy model's collateral information under EAP and MAP) and the score gains a `times` member (speed, rapid guesses, response-time effort, the l_t person fit and the time flags). A time of 0, below 0.001 s, above a day, or not a number is refused with 422 naming its position; so are times sent to a bank without a response-time model."
          }
        },
        "required": [
          "item_ids",
          "responses"
        ],
        "additionalProperties": false,
        "description": "A finished session."
      },
      "Score": {
        "type": "object",
        "properties": {
          "session_id": {
            "type": [
              "string",
              "null"
            ],
            "description": "As sent, a whole number as its digits (null when the request had none)."
          },
          "n_items": {
            "type": "integer",
            "minimum": 1,
            "description": "Items scored (pretest and retired items left out)."
          },
          "n_correct": {
            "type": "integer",
            "minimum": 0,
            "description": "The raw score: the number correct of right/wrong items plus the categories of graded and partial-credit items (a nominal item counts 1 for its key, the bank's key column, and nothing without one)."
          },
          "theta": {
            "type": "number",
            "description": "θ̂, 4 decimals, rounded half away from zero (as the score CSV)."
          },
          "se": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Standard error of θ̂, 4 decimals."
          },
          "iq": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "iq_low": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "iq_high": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "percentile": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "description": "100·Φ((θ − μ)/σ), 1 decimal."
          },
          "method": {
            "type": "string",
            "enum": [
              "eap",
              "map",
              "ml",
              "wle"
            ]
          },
          "flags": {
            "type": "array",
            "items": {
              "type": "string",
              "enum": [
                "clamped_low",
                "clamped_high",
                "low_precision",
                "perfect_score",
                "zero_score",
                "few_items",
                "theta_at_bound",
                "age_outside_norms"
              ]
            }
          },
          "norms": {
            "type": "string",
            "description": "name@version of the norms of the IQ scale."
          },
          "age": {
            "type": "number",
            "minimum": 0,
            "maximum": 130,
            "description": "The age the score was normed at, as sent (at most two decimals); present when the request gave one."
          },
          "n_unscored": {
            "type": "integer",
            "minimum": 0,
            "description": "Present when the bank marks items pretest or retired: answered items left out of the score."
          },
          "domains": {
            "type": "object",
            "description": "Present when the bank has a domain column: per domain, correct and answered counts.",
            "additionalProperties": {
              "type": "object",
              "properties": {
                "correct": {
                  "type": "integer",
                  "minimum": 0
                },
                "answered": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "required": [
                "correct",
                "answered"
              ],
              "additionalProperties": false
            }
          },
          "indexes": {
            "type": "object",
            "description": "On a battery bank (GET /v1/bank model bifactor or correlated): the domain indexes the server reports (iqscore serve --indexes; default those that add value over the full-scale score by Haberman's criterion), keyed by domain; theta, se and the IQ are then the full-scale factor's (a bifactor bank's general factor; a correlated bank's equally weighted composite of its factors, standardised). Absent on a unidimensional bank.",
            "additionalProperties": {
              "$ref": "#/components/schemas/IndexScore"
            }
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "times": {
            "$ref": "#/components/schemas/TimeSummary"
          }
        },
        "required": [
          "session_id",
          "n_items",
          "n_correct",
          "theta",
          "se",
          "iq",
          "iq_low",
          "iq_high",
          "percentile",
          "method",
          "flags",
          "norms",
          "bank_version"
        ],
        "additionalProperties": false,
        "description": "One scored session: the score command's fields, with the same numbers."
      },
      "IndexScore": {
        "type": "object",
        "description": "A domain index on a battery bank: on a bifactor bank the domain's reference composite w_g·θ_g + w_s·θ_s (Reckase 2009; DeMars 2013), on a correlated-factors bank the domain's factor θ_f; N(0, 1) in the calibration population, its posterior mean and SD and its IQ 100 + 15·index with the interval, percentile and flags of the full-scale score (few_items: no item of the domain was answered).",
        "properties": {
          "theta": {
            "type": "number"
          },
          "se": {
            "type": "number",
            "exclusiveMinimum": 0
          },
          "iq": {
            "type": "integer"
          },
          "iq_low": {
            "type": "integer"
          },
          "iq_high": {
            "type": "integer"
          },
          "percentile": {
            "type": "number",
            "minimum": 0,
            "maximum": 100
          },
          "flags": {
            "type": "array",
            "items": {
              "type": "string",
              "enum": [
                "clamped_low",
                "clamped_high",
                "low_precision",
                "perfect_score",
                "zero_score",
                "few_items",
                "theta_at_bound",
                "age_outside_norms"
              ]
            }
          },
          "answered": {
            "type": "integer",
            "minimum": 0
          },
          "correct": {
            "type": "integer",
            "minimum": 0
          }
        },
        "required": [
          "theta",
          "se",
          "iq",
          "iq_low",
          "iq_high",
          "percentile",
          "flags",
          "answered",
          "correct"
        ],
        "additionalProperties": false
      },
      "BatchRequest": {
        "type": "object",
        "properties": {
          "sessions": {
            "type": "array",
            "items": {
              "description": "A session as the body of POST /v1/score (see ScoreRequest). Each is checked alone: one that is not a valid ScoreRequest (not an object, a missing or mistyped member, an unknown item …) is listed in rejects with its reason and field, and the others are scored; so any JSON value is accepted here."
            },
            "maxItems": 100000,
            "description": "At most --max-sessions-per-batch (default 1,000)."
          }
        },
        "required": [
          "sessions"
        ],
        "additionalProperties": false
      },
      "BatchScore": {
        "type": "object",
        "properties": {
          "index": {
            "type": "integer",
            "minimum": 0,
            "description": "Position of the session in the request's sessions."
          },
          "session_id": {
            "type": [
              "string",
              "null"
            ],
            "description": "As sent, a whole number as its digits (null when the request had none)."
          },
          "n_items": {
            "type": "integer",
            "minimum": 1,
            "description": "Items scored (pretest and retired items left out)."
          },
          "n_correct": {
            "type": "integer",
            "minimum": 0,
            "description": "The raw score: the number correct of right/wrong items plus the categories of graded and partial-credit items (a nominal item counts 1 for its key, the bank's key column, and nothing without one)."
          },
          "theta": {
            "type": "number",
            "description": "θ̂, 4 decimals, rounded half away from zero (as the score CSV)."
          },
          "se": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Standard error of θ̂, 4 decimals."
          },
          "iq": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "iq_low": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "iq_high": {
            "type": "integer",
            "minimum": 40,
            "maximum": 160
          },
          "percentile": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "description": "100·Φ((θ − μ)/σ), 1 decimal."
          },
          "method": {
            "type": "string",
            "enum": [
              "eap",
              "map",
              "ml",
              "wle"
            ]
          },
          "flags": {
            "type": "array",
            "items": {
              "type": "string",
              "enum": [
                "clamped_low",
                "clamped_high",
                "low_precision",
                "perfect_score",
                "zero_score",
                "few_items",
                "theta_at_bound",
                "age_outside_norms"
              ]
            }
          },
          "norms": {
            "type": "string",
            "description": "name@version of the norms of the IQ scale."
          },
          "age": {
            "type": "number",
            "minimum": 0,
            "maximum": 130,
            "description": "The age the score was normed at, as sent (at most two decimals); present when the request gave one."
          },
          "n_unscored": {
            "type": "integer",
            "minimum": 0,
            "description": "Present when the bank marks items pretest or retired: answered items left out of the score."
          },
          "domains": {
            "type": "object",
            "description": "Present when the bank has a domain column: per domain, correct and answered counts.",
            "additionalProperties": {
              "type": "object",
              "properties": {
                "correct": {
                  "type": "integer",
                  "minimum": 0
                },
                "answered": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "required": [
                "correct",
                "answered"
              ],
              "additionalProperties": false
            }
          },
          "indexes": {
            "type": "object",
            "description": "On a battery bank (GET /v1/bank model bifactor or correlated): the domain indexes the server reports (iqscore serve --indexes; default those that add value over the full-scale score by Haberman's criterion), keyed by domain; theta, se and the IQ are then the full-scale factor's (a bifactor bank's general factor; a correlated bank's equally weighted composite of its factors, standardised). Absent on a unidimensional bank.",
            "additionalProperties": {
              "$ref": "#/components/schemas/IndexScore"
            }
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "times": {
            "$ref": "#/components/schemas/TimeSummary"
          }
        },
        "required": [
          "index",
          "session_id",
          "n_items",
          "n_correct",
          "theta",
          "se",
          "iq",
          "iq_low",
          "iq_high",
          "percentile",
          "method",
          "flags",
          "norms",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "Reject": {
        "type": "object",
        "properties": {
          "index": {
            "type": "integer",
            "minimum": 0
          },
          "session_id": {
            "type": [
              "string",
              "null"
            ]
          },
          "reason": {
            "type": "string"
          },
          "kind": {
            "type": "string",
            "description": "The problem kind, as in a problem's type (unknown-item, invalid-response, …)."
          },
          "field": {
            "type": [
              "string",
              "null"
            ],
            "description": "JSON Pointer into the request body."
          }
        },
        "required": [
          "index",
          "session_id",
          "reason",
          "kind",
          "field"
        ],
        "additionalProperties": false,
        "description": "A session that was not scored; the others are."
      },
      "BatchResponse": {
        "type": "object",
        "properties": {
          "scores": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/BatchScore"
            }
          },
          "rejects": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Reject"
            }
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "scores",
          "rejects",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "AdministeredItem": {
        "type": "object",
        "properties": {
          "item_id": {
            "type": "string"
          },
          "response": {
            "type": [
              "integer",
              "boolean"
            ],
            "minimum": 0,
            "maximum": 255,
            "description": "1 (or true) correct, 0 (or false) incorrect; the category 0…K−1 for an item in K categories."
          },
          "seconds": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0.001,
            "maximum": 86400,
            "description": "The response's time in seconds (null or absent: not recorded). The finished test's score uses the times as POST /v1/score does (a bank with a response-time model is needed); item selection uses the responses."
          }
        },
        "required": [
          "item_id",
          "response"
        ],
        "additionalProperties": false
      },
      "CATNextRequest": {
        "type": "object",
        "properties": {
          "session_id": {
            "type": [
              "string",
              "integer"
            ],
            "description": "Seeds the test's draws with the bank version: the same id and history give the same answer. A whole number is taken as its digits (8812 is the session \"8812\")."
          },
          "administered": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/AdministeredItem"
            },
            "maxItems": 10000,
            "description": "The test so far, in order (at most the CAT configuration's max_items)."
          },
          "exclude": {
            "type": [
              "array",
              "null"
            ],
            "items": {
              "type": "string"
            },
            "description": "Items this person has seen elsewhere (unknown ids are ignored)."
          },
          "age": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "maximum": 130,
            "description": "The person's age in years, for the finished test's score. Required on every step when the server's norms are age-specific (422 at `/age` otherwise); with linear norms optional, checked and echoed in the score."
          }
        },
        "required": [
          "session_id",
          "administered"
        ],
        "additionalProperties": false
      },
      "CATAdminister": {
        "type": "object",
        "properties": {
          "action": {
            "const": "administer"
          },
          "item_id": {
            "type": "string"
          },
          "domain": {
            "type": "string"
          },
          "theta": {
            "type": "number",
            "description": "θ̂ after the responses so far (the prior mean before any), 4 decimals."
          },
          "se": {
            "type": "number",
            "description": "Its standard error, 4 decimals."
          },
          "n_items": {
            "type": "integer",
            "minimum": 0,
            "description": "Items administered so far."
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "action",
          "item_id",
          "domain",
          "theta",
          "se",
          "n_items",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "CATStop": {
        "type": "object",
        "properties": {
          "action": {
            "const": "stop"
          },
          "reason": {
            "type": "string",
            "enum": [
              "se_reached",
              "max_items",
              "bank_exhausted"
            ]
          },
          "score": {
            "oneOf": [
              {
                "$ref": "#/components/schemas/Score"
              },
              {
                "type": "null"
              }
            ],
            "description": "The test scored as POST /v1/score scores it; null when nothing scorable was administered."
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "action",
          "reason",
          "score",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "CATStep": {
        "oneOf": [
          {
            "$ref": "#/components/schemas/CATAdminister"
          },
          {
            "$ref": "#/components/schemas/CATStop"
          }
        ],
        "discriminator": {
          "propertyName": "action",
          "mapping": {
            "administer": "#/components/schemas/CATAdminister",
            "stop": "#/components/schemas/CATStop"
          }
        }
      },
      "InformationTarget": {
        "type": "object",
        "properties": {
          "theta": {
            "type": "number",
            "minimum": -10,
            "maximum": 10
          },
          "information": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 1000000
          }
        },
        "required": [
          "theta",
          "information"
        ],
        "additionalProperties": false
      },
      "Blueprint": {
        "type": "object",
        "properties": {
          "length": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10000
          },
          "domain_counts": {
            "type": "object",
            "additionalProperties": {
              "type": "integer",
              "minimum": 0
            }
          },
          "domain_weights": {
            "type": "object",
            "additionalProperties": {
              "type": "number",
              "minimum": 0
            }
          },
          "difficulty_counts": {
            "type": "object",
            "additionalProperties": {
              "type": "integer",
              "minimum": 0
            }
          },
          "difficulty_bands": {
            "type": "object",
            "additionalProperties": {
              "type": "array",
              "items": {
                "type": "number"
              },
              "minItems": 2,
              "maxItems": 2
            }
          },
          "anchors_per_domain": {
            "type": "integer",
            "minimum": 0
          },
          "exclude": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "enemies": {
            "type": "array",
            "items": {
              "type": "array",
              "items": {
                "type": "string"
              },
              "minItems": 2
            }
          },
          "target_information": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/InformationTarget"
            },
            "maxItems": 100
          },
          "max_exposure": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 1
          },
          "forms": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1,
            "description": "One form per request."
          },
          "max_overlap": {
            "type": "number",
            "minimum": 0,
            "maximum": 1
          },
          "statuses": {
            "type": "array",
            "items": {
              "type": "string",
              "enum": [
                "active",
                "pretest",
                "retired"
              ]
            }
          }
        },
        "required": [
          "length"
        ],
        "additionalProperties": false,
        "description": "As iqscore assemble --blueprint reads it (README: iqscore assemble)."
      },
      "FormsRequest": {
        "type": "object",
        "properties": {
          "blueprint": {
            "oneOf": [
              {
                "$ref": "#/components/schemas/Blueprint"
              },
              {
                "type": "null"
              }
            ],
            "description": "The blueprint of this form; absent or null: the server's --blueprint."
          },
          "exclude": {
            "type": [
              "array",
              "null"
            ],
            "items": {
              "type": "string"
            },
            "description": "Items to leave out (seen before); unknown ids are ignored."
          },
          "seed": {
            "type": [
              "integer",
              "null"
            ],
            "minimum": 0,
            "maximum": 18446744073709551615,
            "description": "Each seed gives a different, equally valid form; without one a random seed is drawn and returned."
          }
        },
        "required": [],
        "additionalProperties": false,
        "description": "Assembles one form; form assemblies run at most --max-concurrent-forms at a time."
      },
      "FormItem": {
        "type": "object",
        "properties": {
          "item_id": {
            "type": "string"
          },
          "domain": {
            "type": "string"
          },
          "a": {
            "type": "number"
          },
          "b": {
            "type": "number"
          },
          "c": {
            "type": "number"
          }
        },
        "required": [
          "item_id",
          "domain",
          "a",
          "b",
          "c"
        ],
        "additionalProperties": false,
        "description": "An item of the form, easiest first (2PL/3PL slope–difficulty: P = c + (1 − c)/(1 + exp(−a(θ − b)))); an item scored in more than two categories as the 2PL with its peak information: a = 2·√(max I), b = the θ of that peak, c = 0."
      },
      "InformationPoint": {
        "type": "object",
        "properties": {
          "theta": {
            "type": "number"
          },
          "information": {
            "type": "number"
          },
          "se": {
            "type": [
              "number",
              "null"
            ],
            "description": "1/√information; null when the information is 0."
          }
        },
        "required": [
          "theta",
          "information",
          "se"
        ],
        "additionalProperties": false
      },
      "Form": {
        "type": "object",
        "properties": {
          "items": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/FormItem"
            }
          },
          "information": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/InformationPoint"
            }
          },
          "relaxed": {
            "type": "array",
            "items": {
              "type": "string"
            },
            "description": "Rules the search could not meet (empty when every rule holds)."
          },
          "seed": {
            "type": "integer",
            "minimum": 0,
            "maximum": 18446744073709551615
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "items",
          "information",
          "relaxed",
          "seed",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "Bank": {
        "type": "object",
        "properties": {
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "sha256": {
            "type": "string",
            "pattern": "^[0-9a-f]{64}$"
          },
          "n_items": {
            "type": "integer",
            "minimum": 1
          },
          "n_scored": {
            "type": "integer",
            "minimum": 0
          },
          "model": {
            "type": "string",
            "enum": [
              "rasch",
              "1pl",
              "2pl",
              "3pl",
              "graded",
              "gpcm",
              "pcm",
              "rsm",
              "nominal",
              "mixed",
              "bifactor",
              "correlated"
            ],
            "description": "The items' model, or mixed when they differ (graded, gpcm, pcm and nominal items are scored in more than two categories); bifactor for a bank with a general and specific factors (also a testlet bank), correlated for a bank of correlated factors, each item on one; both scored as a battery."
          },
          "domains": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "factors": {
            "type": "object",
            "description": "On a battery bank: the full-scale factor (a bifactor bank's general factor; a correlated bank's composite, full_scale) and the index factors (the domains).",
            "properties": {
              "general": {
                "type": "string"
              },
              "specific": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              }
            },
            "required": [
              "general",
              "specific"
            ],
            "additionalProperties": false
          },
          "indexes": {
            "type": "array",
            "items": {
              "type": "string"
            },
            "description": "On a battery bank: the domains whose indexes every score carries."
          },
          "method": {
            "type": "string",
            "enum": [
              "eap",
              "map",
              "ml",
              "wle"
            ]
          },
          "norms": {
            "type": "string"
          },
          "adaptive": {
            "type": "boolean",
            "description": "Whether /v1/cat/next and /v1/forms are served: always true (a bank without a domain column is one domain, 'all')."
          },
          "default_blueprint": {
            "type": "boolean"
          },
          "exposure_control": {
            "type": "boolean"
          },
          "loaded_at": {
            "type": "string",
            "format": "date-time"
          },
          "exposure": {
            "type": "string",
            "description": "How adaptive steps control item exposure: 'sympson-hetter r_max R calibrated at load (…)', 'sympson-hetter from FILE', or 'off (…)'; a default exposure_target that the bank is too small for is raised or switched off, with the reason in parentheses."
          },
          "response_times": {
            "type": "boolean",
            "description": "Whether the bank has a response-time model (calibrated with `calibrate --time-column`): then score requests and adaptive steps may send each response's seconds."
          }
        },
        "required": [
          "bank_version",
          "sha256",
          "n_items",
          "n_scored",
          "model",
          "domains",
          "method",
          "norms",
          "adaptive",
          "default_blueprint",
          "exposure_control",
          "loaded_at",
          "exposure",
          "response_times"
        ],
        "additionalProperties": false
      },
      "Health": {
        "type": "object",
        "properties": {
          "status": {
            "const": "ok"
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "exposure": {
            "type": "string",
            "description": "How adaptive steps control item exposure: 'sympson-hetter r_max R calibrated at load (…)', 'sympson-hetter from FILE', or 'off (…)'; a default exposure_target that the bank is too small for is raised or switched off, with the reason in parentheses."
          }
        },
        "required": [
          "status",
          "bank_version",
          "exposure"
        ],
        "additionalProperties": false
      },
      "Reload": {
        "type": "object",
        "properties": {
          "reloaded": {
            "const": true
          },
          "previous_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "reloaded",
          "previous_version",
          "bank_version"
        ],
        "additionalProperties": false
      },
      "Problem": {
        "type": "object",
        "properties": {
          "type": {
            "type": "string",
            "description": "urn:iqscore:problem:<kind>"
          },
          "title": {
            "type": "string"
          },
          "status": {
            "type": "integer",
            "minimum": 400,
            "maximum": 599
          },
          "detail": {
            "type": "string"
          },
          "field": {
            "type": "string",
            "description": "JSON Pointer (RFC 6901) to the offending part of the request body."
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          }
        },
        "required": [
          "type",
          "title",
          "status",
          "detail"
        ],
        "additionalProperties": false,
        "description": "RFC 9457 problem details."
      },
      "Live": {
        "type": "object",
        "properties": {
          "status": {
            "const": "live"
          }
        },
        "required": [
          "status"
        ],
        "additionalProperties": false
      },
      "Ready": {
        "type": "object",
        "properties": {
          "status": {
            "const": "ready"
          },
          "bank_version": {
            "type": "string",
            "pattern": "^[0-9a-f]{16}$",
            "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
          },
          "n_items": {
            "type": "integer",
            "minimum": 1
          }
        },
        "required": [
          "status",
          "bank_version",
          "n_items"
        ],
        "additionalProperties": false
      },
      "TimeSummary": {
        "type": "object",
        "description": "What the session's response times say (present when the request sent times). Definitions: README, Unproctored testing.",
        "properties": {
          "n_timed": {
            "type": "integer",
            "minimum": 0,
            "description": "Responses with a time."
          },
          "rapid_guesses": {
            "type": "integer",
            "minimum": 0,
            "description": "Timed responses faster than their item's NT10 threshold (10% of the item's expected time under the bank's time model, at most 10 s; Wise & Ma 2012)."
          },
          "rapid_excluded": {
            "type": "integer",
            "minimum": 0,
            "description": "Rapid guesses left out of θ (the server scores without effort moderation: 0)."
          },
          "rte": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Response-time effort (Wise & Kong 2005): 1 − rapid_guesses / n_timed; 1 without timed responses."
          },
          "speed": {
            "type": [
              "number",
              "null"
            ],
            "description": "Posterior mean of the speed τ (log-seconds scale, population mean 0); null without a timed response."
          },
          "speed_sd": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "description": "Posterior SD of τ; null without a timed response or when θ has no finite SE."
          },
          "lt": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "description": "The lognormal person fit l_t = Σ α²(log t − β + τ̂)², χ²(n − 1) under the model; null with fewer than two timed responses."
          },
          "lt_p": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "maximum": 1,
            "description": "P(χ²(n − 1) ≥ l_t)."
          },
          "flags": {
            "type": "array",
            "items": {
              "type": "string",
              "enum": [
                "rapid_guessing",
                "aberrant_times"
              ]
            },
            "description": "rapid_guessing: rte below 0.90; aberrant_times: lt_p below 0.01."
          }
        },
        "required": [
          "n_timed",
          "rapid_guesses",
          "rapid_excluded",
          "rte",
          "speed",
          "speed_sd",
          "lt",
          "lt_p",
          "flags"
        ],
        "additionalProperties": false
      }
    },
    "responses": {
      "Problem400": {
        "description": "Malformed JSON (kind malformed-json), or a request that is not HTTP/1.1 as RFC 9112 has it (kind bad-request: a parse error, a bad chunk size, a Transfer-Encoding other than chunked); the connection closes after a bad-request.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem403": {
        "description": "A scoring token on an admin endpoint, or reloading over HTTP when no admin token is configured (kind forbidden; SIGHUP still reloads).",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem413": {
        "description": "The body is over --max-body-bytes.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem422": {
        "description": "A request the API or the bank cannot process; field names the offending part.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem503": {
        "description": "Too many form requests wait already (kind busy, with Retry-After: 1), or the request bodies held by all connections would go over --max-buffered-body-bytes (kind overloaded, with Retry-After: 1; refused at the head when Content-Length says so, before 100 Continue); or GET /readyz while the server drains before shutting down (kind not-ready, with Retry-After: 1).",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "Retry-After": {
            "description": "Seconds to wait before retrying (kind busy).",
            "schema": {
              "type": "string"
            }
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem408": {
        "description": "The request head did not arrive within --header-timeout, or its body within --body-timeout, of iqscore serve (kind request-timeout); the connection closes.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem417": {
        "description": "An Expect header other than 100-continue (kind expectation-failed); the connection closes.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem431": {
        "description": "A request head over --max-header-bytes (kind header-too-large); the connection closes.",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem401": {
        "description": "No bearer token, or one the server does not accept, where tokens are configured (kind unauthorized).",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "WWW-Authenticate": {
            "description": "Bearer realm=\"iqscore\" (RFC 6750).",
            "schema": {
              "type": "string"
            }
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      },
      "Problem429": {
        "description": "More than --rate-limit requests a second from this client: its bearer token, else its address (kind rate-limited).",
        "headers": {
          "X-Bank-Version": {
            "$ref": "#/components/headers/BankVersion"
          },
          "Retry-After": {
            "description": "Whole seconds until the client's next request is admitted.",
            "schema": {
              "type": "string"
            }
          },
          "X-Request-Id": {
            "$ref": "#/components/headers/RequestId"
          },
          "X-IQScore-Instance": {
            "$ref": "#/components/headers/Instance"
          }
        },
        "content": {
          "application/problem+json": {
            "schema": {
              "$ref": "#/components/schemas/Problem"
            }
          }
        }
      }
    },
    "headers": {
      "BankVersion": {
        "description": "The version of the bank that answered.",
        "schema": {
          "type": "string",
          "pattern": "^[0-9a-f]{16}$",
          "description": "The first 16 hexadecimal digits of the SHA-256 of the bank file (`sha256sum BANK.csv | cut -c1-16`)."
        }
      },
      "RequestId": {
        "description": "The client's X-Request-Id when it is 1–128 characters of A–Z a–z 0–9 . _ ~ : + / = -, else one the server made (16 hex digits, a dash, a counter); logged with the request.",
        "schema": {
          "type": "string",
          "maxLength": 128
        }
      },
      "Instance": {
        "description": "The instance that answered (iqscore serve --instance; default the host name).",
        "schema": {
          "type": "string"
        }
      }
    },
    "securitySchemes": {
      "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "A token from iqscore serve --tokens FILE (lines `scoring TOKEN` / `admin TOKEN`) or $IQSCORE_SCORING_TOKENS / $IQSCORE_ADMIN_TOKENS. Scoring endpoints need a scoring or admin token when scoring tokens are configured (else they are open); POST /v1/admin/reload always needs an admin token. TLS is terminated by the load balancer in front."
      }
    }
  }
}
"""#

    static let buffer = ByteBuffer(string: json)
}

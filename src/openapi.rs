//! Completes the generated OpenAPI document with what every operation can answer besides its
//! success: the error envelope `{code, data, msg, error}` for 400, 401, 403, 404, 409, 413, 415 and 429
//! (issue 16, finding 15), so a client generator or a fuzzer (Schemathesis) finds every status the
//! server sends documented, with its body.

use utoipa::openapi::{OpenApi, RefOr, Response};

const ERRORS: [(&str, &str); 8] = [
    ("400", "Invalid input; `data.field` names the offending field"),
    ("401", "Not signed in, or the session expired"),
    ("403", "Not allowed"),
    ("404", "Not found"),
    ("409", "Refused by a rule (state, precondition, duplicate); `data` may explain"),
    ("413", "Body too large"),
    ("415", "Unsupported content type"),
    ("429", "Too many attempts; `data.retry_after` seconds (also the Retry-After header)"),
];

pub fn complete(doc: &mut OpenApi) {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("code", ObjectBuilder::new().schema_type(Type::Integer).description(Some("the HTTP status")))
        .property("data", ObjectBuilder::new().schema_type(SchemaType::AnyValue).description(Some("null, or what explains the failure")))
        .property("msg", ObjectBuilder::new().schema_type(Type::String).description(Some("in the language of Accept-Language")))
        .property("error", ObjectBuilder::new().schema_type(Type::String).description(Some("the message's stable name (e.g. `email_taken`): the same in every language")))
        .required("code")
        .required("data")
        .required("msg")
        .required("error")
        .build();
    doc.components.get_or_insert_with(Default::default).schemas.insert("ErrorEnvelope".into(), RefOr::T(envelope.into()));
    for item in doc.paths.paths.values_mut() {
        let ops = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
        for op in ops.into_iter().flatten() {
            for (code, description) in ERRORS {
                let documented = op.responses.responses.get(code).is_some_and(|r| match r {
                    RefOr::T(r) => !r.content.is_empty(),
                    RefOr::Ref(_) => true,
                });
                if !documented {
                    op.responses.responses.insert(code.into(), RefOr::T(error_response(description)));
                }
            }
        }
    }
}

fn error_response(description: &str) -> Response {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorEnvelope"))).build())
        .build()
}

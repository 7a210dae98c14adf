//! The console's app: what `GET/POST/PUT /api/ops/v1/apps` read and write (docs/api.md §Operator),
//! checked field by field before any rule runs.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveEnum, Iterable};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::apps::manifest::valid_image;
use crate::error::{AppError, Msg};
use crate::http::Checked;
use crate::db::enums::{parse_any_case, values};
use crate::market::model::{AppTexts, AppTextsEdit, AppTextsRequest, Classification, ClassificationEdit, ClassificationRequest, Requirements};
use zmarket_protocol::apps::VolumeSpec;

pub const NAME_MAX_CHARS: usize = 60;
pub const SUMMARY_MAX_CHARS: usize = 200;
pub const DESCRIPTION_MAX_CHARS: usize = 5000;
pub const PUBLISHER_MAX_CHARS: usize = 60;
pub const VERSION_MAX_CHARS: usize = 40;
pub const PORT_NAME_MAX_CHARS: usize = 40;
pub const MAX_GPUS: i64 = 16;
/// Icons are small pictures: PNG, JPEG or WebP by content.
pub const ICON_MAX_BYTES: usize = 256 * 1024;

/// An app as the operator sees it: the market's fields in both languages, how it installs, and
/// whether it is listed.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct OpsApp {
    pub id: String,
    #[serde(flatten)]
    #[schema(inline)]
    pub texts: AppTexts,
    /// Where the market serves the icon.
    pub icon_url: String,
    #[serde(flatten)]
    #[schema(inline)]
    pub class: Classification,
    pub publisher: String,
    pub version: String,
    pub requirements: Requirements,
    /// The image reference agents install (empty when the app has no install manifest).
    pub image: String,
    pub ports: Vec<OpsPort>,
    pub volumes: Vec<VolumeSpec>,
    /// The HTTP path on the web port that answers once the app is up.
    pub health: Option<String>,
    /// False hides it from the market.
    pub listed: bool,
    pub top_pick: bool,
    /// seed (the built-in catalogue) or local (published here).
    pub origin: String,
    /// The archive of `image` the market holds for boxes with no internet, if any.
    pub archive: Option<ArchiveInfo>,
    /// Moved by every change (an edit, the icon, an image archive): `PUT` takes it back and
    /// answers 409 `stale_edit` when the app changed since.
    pub revision: i64,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct OpsPort {
    /// The port inside the container.
    pub container: u16,
    /// The port that serves the app's web page (at most one, TCP).
    pub web: bool,
    /// What it is for (shown only).
    pub name: Option<String>,
    /// tcp (default) or udp.
    pub protocol: String,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ArchiveInfo {
    pub sha256: String,
    pub size: i64,
}

/// `POST /apps/{id}/image`'s answer: the archive stored and the image the app now installs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImageUpload {
    pub sha256: String,
    pub size: u64,
    pub image: String,
}

/// `GET /apps?q=&listed=`.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AppsQuery {
    /// Part of the id or of a name (either language), case-insensitive.
    pub q: Option<String>,
    /// true: listed apps only; false: hidden ones only.
    pub listed: Option<bool>,
}

/// The body of POST (every required field) and PUT (any fields: the others stay).
// A field it does not take is refused: serde checks the keys its flattened groups leave, and
// `crate::http` names the field, as in any body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppRequest {
    /// POST only: lowercase-kebab, 1-64 characters.
    pub id: Option<String>,
    #[serde(flatten)]
    #[schema(inline)]
    pub texts: AppTextsRequest,
    #[serde(flatten)]
    #[schema(inline)]
    pub class: ClassificationRequest,
    pub publisher: Option<String>,
    /// A changed image without a new version gets one (`<version>+r<n>`), so installations see
    /// the update.
    pub version: Option<String>,
    pub requirements: Option<RequirementsRequest>,
    pub image: Option<String>,
    pub ports: Option<Vec<PortRequest>>,
    pub volumes: Option<Vec<VolumeRequest>>,
    /// A path, or null / "" for none.
    #[serde(default, deserialize_with = "some_option")]
    pub health: Option<Option<String>>,
    pub listed: Option<bool>,
    pub top_pick: Option<bool>,
    /// PUT: the `revision` the form was opened with; 409 `stale_edit` when the app changed
    /// since. Left out, the edit applies to whatever the app is now.
    pub revision: Option<i64>,
}

fn some_option<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::<String>::deserialize(d)?))
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequirementsRequest {
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
    /// The lowest CUDA version the image runs on ("12.4"), for an app that needs GPUs.
    #[serde(default)]
    pub cuda: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PortRequest {
    pub container: i64,
    #[serde(default)]
    pub web: bool,
    pub name: Option<String>,
    pub protocol: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeRequest {
    pub name: String,
    pub path: String,
}

/// A checked request: every value given is valid on its own (what needs the app as a whole, a
/// health path's web port, is checked when the edit is applied).
#[derive(Debug, Clone, Default)]
pub struct AppEdit {
    pub id: Option<String>,
    pub texts: AppTextsEdit,
    pub class: ClassificationEdit,
    pub publisher: Option<String>,
    pub version: Option<String>,
    pub requirements: Option<Requirements>,
    pub image: Option<String>,
    pub ports: Option<Vec<OpsPort>>,
    pub volumes: Option<Vec<VolumeSpec>>,
    pub health: Option<Option<String>>,
    pub listed: Option<bool>,
    pub top_pick: Option<bool>,
    pub revision: Option<i64>,
}

pub fn valid_slug(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.split('-').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

fn text(field: &'static str, v: Option<String>, min: usize, max: usize, msg: Msg) -> Result<Option<String>, AppError> {
    let Some(v) = v else { return Ok(None) };
    let v = v.trim().to_string();
    let n = v.chars().count();
    if n < min || n > max || v.chars().any(|c| c.is_control() && c != '\n') {
        return Err(AppError::invalid(field, msg));
    }
    Ok(Some(v))
}

/// A value picked from one of the market's lists: the value it names (in any case), else refused
/// listing them.
fn choice<T: ActiveEnum<Value = String> + Iterable>(field: &'static str, v: Option<String>) -> Result<Option<T>, AppError> {
    let Some(v) = v else { return Ok(None) };
    parse_any_case(&v).map(Some).ok_or_else(|| AppError::invalid(field, Msg::AppChoiceInvalid(field, values::<T>())))
}

fn check_texts(t: AppTextsRequest) -> Result<AppTextsEdit, AppError> {
    Ok(AppTextsEdit {
        name_en: text("name_en", t.name_en, 1, NAME_MAX_CHARS, Msg::AppNameInvalid)?,
        name_zh: text("name_zh", t.name_zh, 1, NAME_MAX_CHARS, Msg::AppNameInvalid)?,
        summary_en: text("summary_en", t.summary_en, 1, SUMMARY_MAX_CHARS, Msg::AppSummaryInvalid)?,
        summary_zh: text("summary_zh", t.summary_zh, 1, SUMMARY_MAX_CHARS, Msg::AppSummaryInvalid)?,
        description_en: text("description_en", t.description_en, 0, DESCRIPTION_MAX_CHARS, Msg::AppDescriptionInvalid)?,
        description_zh: text("description_zh", t.description_zh, 0, DESCRIPTION_MAX_CHARS, Msg::AppDescriptionInvalid)?,
    })
}

fn check_class(c: ClassificationRequest) -> Result<ClassificationEdit, AppError> {
    Ok(ClassificationEdit {
        category: choice("category", c.category)?,
        display_type: choice("display_type", c.display_type)?,
        tier: choice("tier", c.tier)?,
        kind: choice("kind", c.kind)?,
    })
}

impl Checked for AppEdit {
    type Body = AppRequest;
    fn check(r: AppRequest) -> Result<AppEdit, AppError> {
        let id = match r.id {
            Some(id) if !valid_slug(id.trim()) => return Err(AppError::invalid("id", Msg::AppIdInvalid)),
            id => id.map(|i| i.trim().to_string()),
        };
        let version = text("version", r.version, 1, VERSION_MAX_CHARS, Msg::AppVersionInvalid)?;
        if version.as_deref().is_some_and(|v| !v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))) {
            return Err(AppError::invalid("version", Msg::AppVersionInvalid));
        }
        let requirements = match r.requirements {
            None => None,
            Some(q) => {
                let ok = (1..=1024).contains(&q.cpu_cores) && q.memory_bytes >= 0 && q.disk_bytes >= 0 && (0..=MAX_GPUS).contains(&q.gpu_count);
                if !ok {
                    return Err(AppError::invalid("requirements", Msg::AppRequirementsInvalid));
                }
                let cuda = match q.cuda.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
                    None => None,
                    Some(c) => match zmarket_protocol::gpus::CudaVersion::parse(c) {
                        Some(v) if q.gpu_count > 0 => Some(v.to_string()),
                        _ => return Err(AppError::invalid("requirements.cuda", Msg::InvalidField("requirements.cuda"))),
                    },
                };
                Some(Requirements { cpu_cores: q.cpu_cores as i32, memory_bytes: q.memory_bytes, disk_bytes: q.disk_bytes, gpu_count: q.gpu_count as i32, cuda })
            }
        };
        let image = match r.image.map(|i| i.trim().to_string()) {
            Some(i) if !valid_image(&i) => return Err(AppError::invalid("image", Msg::AppImageInvalid)),
            i => i,
        };
        let ports = r.ports.map(check_ports).transpose()?;
        let volumes = r.volumes.map(check_volumes).transpose()?;
        let health = match r.health {
            None => None,
            Some(h) => {
                let h = h.map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
                if h.as_deref().is_some_and(|h| !h.starts_with('/') || h.len() > 200 || h.chars().any(|c| c.is_whitespace() || c.is_control())) {
                    return Err(AppError::invalid("health", Msg::AppHealthInvalid));
                }
                Some(h)
            }
        };
        Ok(AppEdit {
            id,
            texts: check_texts(r.texts)?,
            class: check_class(r.class)?,
            publisher: text("publisher", r.publisher, 1, PUBLISHER_MAX_CHARS, Msg::AppPublisherInvalid)?,
            version,
            requirements,
            image,
            ports,
            volumes,
            health,
            listed: r.listed,
            top_pick: r.top_pick,
            revision: match r.revision {
                Some(n) if n < 0 => return Err(AppError::invalid("revision", Msg::InvalidField("revision"))),
                n => n,
            },
        })
    }
}

fn check_ports(ports: Vec<PortRequest>) -> Result<Vec<OpsPort>, AppError> {
    let bad = || AppError::invalid("ports", Msg::AppPortsInvalid);
    let mut out: Vec<OpsPort> = Vec::new();
    for p in ports {
        let protocol = p.protocol.map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).unwrap_or_else(|| "tcp".into());
        let container = u16::try_from(p.container).ok().filter(|c| *c > 0).ok_or_else(bad)?;
        let name = p.name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        let name_ok = name.as_deref().is_none_or(|n| n.chars().count() <= PORT_NAME_MAX_CHARS && !n.chars().any(char::is_control));
        let twice = out.iter().any(|o| o.container == container && o.protocol == protocol);
        if (protocol != "tcp" && protocol != "udp") || !name_ok || twice || (p.web && protocol != "tcp") {
            return Err(bad());
        }
        out.push(OpsPort { container, web: p.web, name, protocol });
    }
    if out.iter().filter(|p| p.web).count() > 1 {
        return Err(bad());
    }
    Ok(out)
}

fn check_volumes(volumes: Vec<VolumeRequest>) -> Result<Vec<VolumeSpec>, AppError> {
    let mut out: Vec<VolumeSpec> = Vec::new();
    for v in volumes {
        let (name, path) = (v.name.trim().to_string(), v.path.trim().to_string());
        let name_ok = !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        let path_ok = path.starts_with('/') && path.len() <= 200 && !path.split('/').any(|s| s == "..") && !path.chars().any(char::is_control);
        if !name_ok || !path_ok || out.iter().any(|o| o.name == name) {
            return Err(AppError::invalid("volumes", Msg::AppVolumesInvalid));
        }
        out.push(VolumeSpec { name, path });
    }
    Ok(out)
}

impl AppsQuery {
    pub fn checked(&self) -> Result<Option<String>, AppError> {
        let q = self.q.as_deref().unwrap_or("").trim().to_lowercase();
        if q.chars().count() > 100 || q.chars().any(char::is_control) {
            return Err(AppError::invalid("q", Msg::InvalidField("q")));
        }
        Ok((!q.is_empty()).then_some(q))
    }
}

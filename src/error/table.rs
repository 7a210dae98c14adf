//! The one table of messages: for every [`Msg`], one row with its HTTP status, its stable name
//! (`error` in the envelope: a program tells refusals apart by it, whatever the language of `msg`)
//! and its texts in English and Chinese (the English of docs/product.md §5 and §8 word for word
//! where it names them). A message has one status wherever it is raised, the API's envelope or a
//! page of an app's origin; names are part of the HTTP contract (docs/api.md §Conventions): a
//! renamed variant keeps its name here.

use std::borrow::Cow;

use axum::http::StatusCode;

use crate::error::Msg;
use crate::lang::{Lang, Words};

impl Msg {
    /// The status this message answers with and its stable name.
    pub fn code(&self) -> (StatusCode, &'static str) {
        let (status, name, _) = self.row(Lang::En);
        (status, name)
    }

    /// The message's text in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        self.row(lang).2.into_owned()
    }

    /// The message's row: its status, its stable name and its text in `lang`.
    pub(super) fn row(&self, lang: Lang) -> (StatusCode, &'static str, Cow<'static, str>) {
        use StatusCode as S;
        match self {
            Msg::NotFound => (S::NOT_FOUND, "not_found", the(lang, "Not found", "未找到")),
            Msg::ApiNotFound => (S::NOT_FOUND, "api_not_found", the(lang, "No such API endpoint", "接口不存在")),
            Msg::MethodNotAllowed => (S::METHOD_NOT_ALLOWED, "method_not_allowed", the(lang, "Method not allowed", "不支持该请求方法")),
            Msg::MalformedJson => (S::BAD_REQUEST, "malformed_json", the(lang, "Malformed JSON body", "请求体不是有效的 JSON")),
            Msg::JsonContentType => (S::UNSUPPORTED_MEDIA_TYPE, "json_content_type", the(lang, "Content-Type must be application/json", "Content-Type 必须为 application/json")),
            Msg::BodyTooLarge => (S::PAYLOAD_TOO_LARGE, "body_too_large", the(lang, "Request body too large", "请求体过大")),
            Msg::BodyTooSlow => (S::REQUEST_TIMEOUT, "body_too_slow", the(lang, "The request body arrived too slowly", "请求体传输过慢")),
            Msg::Internal => (S::INTERNAL_SERVER_ERROR, "internal", the(lang, "Internal server error, please try again later", "服务器内部错误，请稍后再试")),
            Msg::TooManyRequests => (S::TOO_MANY_REQUESTS, "too_many_requests", the(lang, "Too many attempts, please try again later", "尝试次数过多，请稍后再试")),
            Msg::Unauthorized => (S::UNAUTHORIZED, "unauthorized", the(lang, "Please sign in first", "请先登录")),
            Msg::SessionExpired => (S::UNAUTHORIZED, "session_expired", the(lang, "Session expired, please sign in again", "登录已过期，请重新登录")),
            Msg::Forbidden => (S::FORBIDDEN, "forbidden", the(lang, "Sorry, you do not have access to this page", "抱歉，您无权访问此页面")),
            Msg::NotAdmin => (S::FORBIDDEN, "not_admin", the(lang, "Only company administrators can do this, please contact the administrator", "只有企业管理员可以执行此操作，请联系管理员")),
            Msg::InvalidField(field) => (S::BAD_REQUEST, "invalid_field", match lang {
                Lang::En => format!("Invalid value for {field}"),
                Lang::Zh => format!("参数 {field} 无效"),
            }.into()),
            Msg::InvalidBodyField(field) => (S::BAD_REQUEST, "invalid_body_field", match lang {
                Lang::En => format!("Invalid value for {field}"),
                Lang::Zh => format!("参数 {field} 无效"),
            }.into()),
            Msg::ControlCharacters(field) => (S::BAD_REQUEST, "control_characters", match lang {
                Lang::En => format!("{field} must not contain control characters"),
                Lang::Zh => format!("参数 {field} 不能包含控制字符"),
            }.into()),
            Msg::InvalidPagination => (S::BAD_REQUEST, "invalid_pagination", the(lang, "offset must be 0 or more and limit between 1 and 100", "offset 不能小于 0，limit 必须在 1 到 100 之间")),
            Msg::EmailRequired => (S::BAD_REQUEST, "email_required", the(lang, "Email Required", "请输入邮箱")),
            Msg::EmailFormatInvalid => (S::BAD_REQUEST, "email_format_invalid", the(lang, "Email Format Invalid", "邮箱格式不正确")),
            Msg::EmailTooLong => (S::BAD_REQUEST, "email_too_long", the(lang, "Email Address is too long", "邮箱地址过长")),
            Msg::EmailTaken => (S::CONFLICT, "email_taken", the(lang, "This email is already registered", "该邮箱已注册")),
            Msg::EmailNotVerified => (S::FORBIDDEN, "email_not_verified", the(lang, "Please verify your email address first: check your inbox", "请先验证邮箱：请查收验证邮件")),
            Msg::UsernameRequired => (S::BAD_REQUEST, "username_required", the(lang, "Username Required", "请输入用户名")),
            Msg::UsernameFormatInvalid => (S::BAD_REQUEST, "username_format_invalid", the(lang, "Username Format Invalid", "用户名格式不正确（3-50 个字符）")),
            Msg::PasswordRequired => (S::BAD_REQUEST, "password_required", the(lang, "Password Required", "请输入密码")),
            Msg::PasswordFormatInvalid => (S::BAD_REQUEST, "password_format_invalid", the(lang,
                "Password must be 8-15 characters with at least one letter and one digit",
                "密码须为 8-15 个字符，且至少包含一个字母和一个数字",
            )),
            Msg::PasswordIncorrect => (S::BAD_REQUEST, "password_incorrect", the(lang, "Password Incorrect", "密码错误")),
            Msg::PasswordMismatch => (S::BAD_REQUEST, "password_mismatch", the(lang, "Password doesn't match", "两次输入的密码不一致")),
            Msg::CredentialsIncorrect => (S::UNAUTHORIZED, "credentials_incorrect", the(lang, "Email or password incorrect", "邮箱或密码错误")),
            Msg::AgreementRequired => (S::BAD_REQUEST, "agreement_required", the(lang, "Please agree to the Terms of Use and Privacy Policy", "请同意《使用条款》和《隐私政策》")),
            Msg::VerificationInvalid => (S::BAD_REQUEST, "verification_invalid", the(lang, "This verification link is invalid", "验证链接无效")),
            Msg::VerificationExpired => (S::CONFLICT, "verification_expired", the(lang, "This verification link has expired, please sign up again", "验证链接已过期，请重新注册")),
            Msg::RefreshTokenInvalid => (S::UNAUTHORIZED, "refresh_token_invalid", the(lang, "Session expired, please sign in again", "登录已过期，请重新登录")),
            Msg::RefreshTokenReused => (S::UNAUTHORIZED, "refresh_token_reused", the(lang, "This session was ended for your security, please sign in again", "为保障账户安全，该会话已结束，请重新登录")),
            Msg::NotCompanyMember => (S::FORBIDDEN, "not_company_member", the(lang, "You are not a member of this company", "您不是该企业的成员")),
            Msg::AvatarTooLarge => (S::PAYLOAD_TOO_LARGE, "avatar_too_large", the(lang, "The avatar must be at most 3MB", "头像不能超过 3MB")),
            Msg::AvatarType => (S::UNSUPPORTED_MEDIA_TYPE, "avatar_type", the(lang, "The avatar must be a JPG, JPEG, PNG, WEBP or GIF image", "头像必须是 JPG、JPEG、PNG、WEBP 或 GIF 图片")),
            Msg::AvatarMissing => (S::BAD_REQUEST, "avatar_missing", the(lang, "Please choose an image file", "请选择图片文件")),
            Msg::AccountNotDeletable => (S::CONFLICT, "account_not_deletable", the(lang,
                "The account cannot be deleted yet: unlink all devices, release rented Z-APPs, settle your balance and leave all companies",
                "账户暂不能注销：请先解绑所有设备、释放租用的 Z-APP、结清余额并退出所有企业",
            )),
            Msg::AliasFormatInvalid => (S::BAD_REQUEST, "alias_format_invalid", the(lang, "Alias Format Invalid", "备注名格式不正确（3-50 个字符）")),
            Msg::CompanyNameInvalid => (S::BAD_REQUEST, "company_name_invalid", the(lang, "Company name must be 3-50 characters", "企业名称须为 3-50 个字符")),
            Msg::CompanyIdRequired => (S::BAD_REQUEST, "company_id_required", the(lang, "Company id required", "请输入企业 ID")),
            Msg::CompanyNotFound => (S::NOT_FOUND, "company_not_found", the(lang, "Company not found", "企业不存在")),
            Msg::CompanyNotDeletable => (S::CONFLICT, "company_not_deletable", the(lang,
                "The company cannot be deleted: unlink all devices and release AI compute resources first",
                "企业暂不能删除：请先解绑所有设备并释放 AI 算力资源",
            )),
            Msg::NoPermissionManageDevices => (S::FORBIDDEN, "no_permission_manage_devices", the(lang, "No permission to manage devices, please contact the administrator", "无权管理设备，请联系管理员")),
            Msg::NoPermissionApps => (S::FORBIDDEN, "no_permission_apps", the(lang, "No permission to install or rent Z-APP, please contact the administrator", "无权安装或租用 Z-APP，请联系管理员")),
            Msg::InvitationExpired => (S::CONFLICT, "invitation_expired", the(lang, "The invitation has expired", "邀请已过期")),
            Msg::InvitationNotForYou => (S::FORBIDDEN, "invitation_not_for_you", the(lang, "This invitation was sent to another email address", "该邀请发送给了其他邮箱")),
            Msg::InvitationNotFound => (S::NOT_FOUND, "invitation_not_found", the(lang, "Invitation not found", "邀请不存在")),
            Msg::RecordNotPending => (S::CONFLICT, "record_not_pending", the(lang, "This request has already been handled", "该请求已处理")),
            Msg::AlreadyMember => (S::CONFLICT, "already_member", the(lang, "Already a member of this company", "已经是该企业的成员")),
            Msg::AlreadyApplied => (S::CONFLICT, "already_applied", the(lang, "An application is already waiting", "申请已在等待处理")),
            Msg::LastAdmin => (S::CONFLICT, "last_admin", the(lang, "The last administrator cannot be removed", "不能移除最后一位管理员")),
            Msg::MemberNotFound => (S::NOT_FOUND, "member_not_found", the(lang, "Member not found", "成员不存在")),
            Msg::ResourceNotFound => (S::NOT_FOUND, "resource_not_found", the(lang, "Resource not found", "资源不存在")),
            Msg::CompanyContextRequired => (S::FORBIDDEN, "company_context_required", the(lang, "Switch to a company first", "请先切换到企业")),
            Msg::RecordNotFound => (S::NOT_FOUND, "record_not_found", the(lang, "Invitation or application not found", "邀请或申请不存在")),
            Msg::AssignmentNotFound => (S::NOT_FOUND, "assignment_not_found", the(lang, "This resource is not assigned to this member", "该资源未分配给此成员")),
            Msg::InvalidDeviceId => (S::BAD_REQUEST, "invalid_device_id", the(lang, "Invalid Device ID", "设备 ID 无效")),
            Msg::DeviceAlreadyBound => (S::CONFLICT, "device_already_bound", the(lang, "This device is already bound", "该设备已被绑定")),
            Msg::OrderRequirementsNotSatisfied => (S::CONFLICT, "order_requirements_not_satisfied", the(lang, "Order requirements not satisfied, cannot take this order.", "不满足订单要求，无法接单。")),
            Msg::ModificationNotSupported => (S::CONFLICT, "modification_not_supported", the(lang, "Modification not supported", "不支持修改")),
            Msg::SharingModeForbids => (S::CONFLICT, "sharing_mode_forbids", the(lang, "This operation is not allowed in the current sharing mode", "当前共享模式下不允许此操作")),
            Msg::DeviceNotRunning => (S::CONFLICT, "device_not_running", the(lang, "This operation is not allowed while the device is stopped or offline", "设备已停止或离线，不允许此操作")),
            Msg::NoCapacity => (S::CONFLICT, "no_capacity", the(lang, "No server has enough free capacity", "没有服务器有足够的空闲资源")),
            Msg::DeviceNotFound => (S::NOT_FOUND, "device_not_found", the(lang, "Device not found", "设备不存在")),
            Msg::DeviceSecretInvalid => (S::UNAUTHORIZED, "device_secret_invalid", the(lang, "This device is not registered or was unlinked: register it again", "该设备未注册或已解绑：请重新注册")),
            // docs/product.md §8 "Network authorization failed" (issue 41): the market refusing a
            // box, a tunnel or an app's origin on the network says so first, then why.
            Msg::RegistrationTokenInvalid => (S::FORBIDDEN, "registration_token_invalid", the(lang,
                "Network authorization failed: this market needs a registration token to register a device (set agent.registration_token)",
                "网络授权失败：本市场注册设备需要注册令牌（请设置 agent.registration_token）",
            )),
            Msg::AgentProtocolUnsupported(sent) => (S::BAD_REQUEST, "agent_protocol_unsupported", match lang {
                Lang::En => format!(
                    "This agent speaks version {sent} of the agent protocol, which this market does not know (it speaks versions 1 to {}): update the market, or install the agent it serves (/install.sh)",
                    zmarket_protocol::PROTOCOL_VERSION
                ),
                Lang::Zh => format!(
                    "该代理使用第 {sent} 版代理协议，本市场不支持（本市场支持第 1 至 {} 版）：请升级市场，或安装本市场提供的代理（/install.sh）",
                    zmarket_protocol::PROTOCOL_VERSION
                ),
            }.into()),
            Msg::HostHasMachines => (S::CONFLICT, "host_has_machines", the(lang, "Delete the Z-CLOUD machines running on this server first", "请先删除运行在此服务器上的 Z-CLOUD 云主机")),
            Msg::ZcloudRentalNotFound => (S::NOT_FOUND, "zcloud_rental_not_found", the(lang, "No such Z-CLOUD machine runs on this server", "此服务器上没有这台 Z-CLOUD 云主机")),
            Msg::ZcloudRentalEnding => (S::CONFLICT, "zcloud_rental_ending", the(lang, "This Z-CLOUD machine is already being stopped", "这台 Z-CLOUD 云主机已在停止中")),
            Msg::DownloadNotServed => (S::NOT_FOUND, "download_not_served", the(lang,
                "This market serves the agent for Linux x86-64 only: this platform is not served here",
                "本市场只提供 Linux x86-64 版代理程序，此平台不在这里提供",
            )),
            Msg::AppNotFound => (S::NOT_FOUND, "app_not_found", the(lang, "App not found", "应用不存在")),
            Msg::KeywordTooLong => (S::BAD_REQUEST, "keyword_too_long", the(lang, "The search keyword is too long (at most 100 characters)", "搜索关键词过长（最多 100 个字符）")),
            Msg::NotificationNotFound => (S::NOT_FOUND, "notification_not_found", the(lang, "Notification not found", "通知不存在")),
            Msg::AppNotInstallable => (S::CONFLICT, "app_not_installable", the(lang, "This app cannot be installed on devices yet", "该应用暂不支持安装到设备")),
            Msg::NoUpdate => (S::CONFLICT, "no_update", the(lang, "The app already runs the newest version", "该应用已是最新版本")),
            Msg::NoGpuRuntime => (S::CONFLICT, "no_gpu_runtime", the(lang, "The app needs GPUs and the device's Docker has no NVIDIA runtime", "应用需要 GPU，但设备的 Docker 没有 NVIDIA 运行时")),
            Msg::NoFreeGpu => (S::CONFLICT, "no_free_gpu", the(lang, "Every GPU of this device is already in use by another app or machine", "此设备的 GPU 都已被其他应用或云主机占用")),
            Msg::CudaTooOld(need, have) => (S::CONFLICT, "cuda_too_old", match lang {
                Lang::En => format!("The app needs CUDA {need} or newer; this device's driver runs CUDA {have}"),
                Lang::Zh => format!("应用需要 CUDA {need} 或更新版本，此设备的驱动只支持 CUDA {have}"),
            }.into()),
            Msg::GpuFailedCheck => (S::CONFLICT, "gpu_failed_check", the(lang, "A GPU of this device failed its last check, so it is not offered for GPU apps", "此设备有 GPU 未通过最近一次检测，暂不提供给 GPU 应用")),
            Msg::AppAlreadyInstalled => (S::CONFLICT, "app_already_installed", the(lang, "This app is already installed on this device", "该应用已安装在此设备上")),
            Msg::RequirementsShort(gaps) => (S::CONFLICT, "requirements_short", requirements_short(gaps, lang).into()),
            Msg::InstallationNotFound => (S::NOT_FOUND, "installation_not_found", the(lang, "App not found on your devices", "未找到该应用的安装")),
            Msg::ActionNotAllowed(action, status) => (S::CONFLICT, "action_not_allowed", match lang {
                Lang::En => format!("Cannot {} the app while it is {}", action.en, status.en),
                Lang::Zh => format!("应用当前状态（{}）不允许执行“{}”", status.zh, action.zh),
            }.into()),
            Msg::AppOffline => (S::CONFLICT, "app_offline", the(lang, "Cannot launch while Z-APP is offline", "Z-APP 离线时无法启动")),
            Msg::DeviceOffline => (S::CONFLICT, "device_offline", the(lang, "The device is offline", "设备离线")),
            Msg::AppNotRunning => (S::CONFLICT, "app_not_running", the(lang, "The app is not running", "应用未在运行")),
            Msg::AppHasNoWeb => (S::NOT_FOUND, "app_has_no_web", the(lang, "This app has no web interface", "该应用没有网页界面")),
            Msg::PortNotDeclared => (S::BAD_REQUEST, "port_not_declared", the(lang, "Network authorization failed: the app does not declare this port", "网络授权失败：该应用未声明此端口")),
            Msg::PortNotAllowed => (S::BAD_REQUEST, "port_not_allowed", the(lang, "Network authorization failed: this port is not open for tunnels on the box", "网络授权失败：该设备未开放此端口的隧道")),
            Msg::OpenLinkInvalid => (S::FORBIDDEN, "open_link_invalid", the(lang,
                "Network authorization failed: this link has expired or was already used. Open the app again from the market.",
                "网络授权失败：此链接已过期或已被使用，请从市场重新打开应用。",
            )),
            Msg::TooManyStreams => (S::CONFLICT, "too_many_streams", the(lang, "Too many connections to this device are open; close some and try again", "此设备打开的连接过多，请关闭一些后重试")),
            Msg::TooManySockets => (S::TOO_MANY_REQUESTS, "too_many_sockets", the(lang, "Too many live connections of this kind are open; close some and try again", "此类实时连接打开的过多，请关闭一些后重试")),
            Msg::MetricsNotAllowed => (S::FORBIDDEN, "metrics_not_allowed", the(lang, "Metrics are served only to the addresses in server.metrics_allow", "指标仅对 server.metrics_allow 中的地址提供")),
            Msg::AccessEnded => (S::FORBIDDEN, "access_ended", the(lang, "Your access to this has ended", "你对此的访问权限已结束")),
            Msg::WebSocketRequired => (S::BAD_REQUEST, "web_socket_required", the(lang, "This address takes a WebSocket connection", "此地址需要 WebSocket 连接")),
            Msg::AppSignInRequired => (S::UNAUTHORIZED, "app_sign_in_required", the(lang, "Network authorization failed: open this app from the market to use it", "网络授权失败：请从市场打开此应用")),
            Msg::AppCrossOrigin => (S::FORBIDDEN, "app_cross_origin", the(lang, "This app does not accept changes sent from another site", "此应用不接受来自其他网站的更改请求")),
            Msg::StreamEnded(reason) => {
                // The box has no such container (404); the app or the box is not there now (409);
                // the box has too many streams open (429); the box or the app failed (502).
                let status = match *reason {
                    "not_found" => S::NOT_FOUND,
                    "done" | "not_running" | "channel_lost" => S::CONFLICT,
                    "too_many" => S::TOO_MANY_REQUESTS,
                    _ => S::BAD_GATEWAY,
                };
                let name = if *reason == "not_found" { "stream_not_found" } else { "stream_ended" };
                let (en, zh) = match *reason {
                    "done" => ("The connection ended", "连接已结束"),
                    "not_found" => ("The app's container is gone", "应用的容器已不存在"),
                    "not_running" => ("The app is not running", "应用未在运行"),
                    "port_not_allowed" => ("Network authorization failed: this port is not open on the box", "网络授权失败：该设备未开放此端口"),
                    "refused" => ("Nothing answers on this port", "此端口无服务响应"),
                    "docker_unavailable" => ("Docker is not available on the device", "此设备上没有可用的 Docker"),
                    "too_many" => ("Too many connections to this device are open", "此设备打开的连接过多"),
                    "channel_lost" => ("The connection to the device was lost", "与设备的连接已断开"),
                    _ => ("The connection to the app failed", "连接应用失败"),
                };
                (status, name, the(lang, en, zh))
            }
            Msg::AppNoAnswer => (S::BAD_GATEWAY, "app_no_answer", the(lang, "The app did not answer", "应用没有响应")),
            Msg::InstanceUnreachable => (S::BAD_GATEWAY, "instance_unreachable", the(lang, "The market instance holding this device's connection does not answer", "持有该设备连接的市场实例没有响应")),
            Msg::DatabaseUnreachable => (S::SERVICE_UNAVAILABLE, "database_unreachable", the(lang, "The database does not answer", "数据库没有响应")),
            Msg::AiComputeOffline => (S::CONFLICT, "ai_compute_offline", the(lang, "Cannot manage while the AI compute app is offline", "AI 算力应用离线时无法管理")),
            Msg::LiteAppNeedsGpu => (S::CONFLICT, "lite_app_needs_gpu", the(lang, "A lite app space is not supported without a GPU", "没有 GPU 的设备不支持轻应用空间")),
            Msg::LiteAppRentable => (S::CONFLICT, "lite_app_rentable", the(lang, "A lite app space cannot be edited or powered off while any lite app is rentable", "有轻应用可出租时，轻应用空间不能编辑或关机")),
            Msg::StopLiteApps => (S::CONFLICT, "stop_lite_apps", the(lang, "Stop all LiteApps before editing", "请先停止所有轻应用再编辑")),
            Msg::RentOwnDevice => (S::CONFLICT, "rent_own_device", the(lang, "This is your own device: install the app instead of renting it", "这是您自己的设备：请直接安装，无需租用")),
            Msg::RentWithinCompany => (S::CONFLICT, "rent_within_company", the(lang, "A company and its administrators cannot rent each other's devices", "企业与其管理员之间不能相互租用设备")),
            Msg::DeviceNotRentable => (S::CONFLICT, "device_not_rentable", the(lang, "This device is not offered for rent", "该设备未开放出租")),
            Msg::RentalSpent => (S::CONFLICT, "rental_spent", the(lang, "This rental has ended or its held coins are used up: rent the app again", "此次租用已结束或冻结的金币已用完：请重新租用")),
            Msg::RentalNotExtendable => (S::CONFLICT, "rental_not_extendable", the(lang,
                "Only a rental that is still under way can be extended: this one has ended, failed or used up its time",
                "只有进行中的租用可以续租：此次租用已结束、失败或已到期",
            )),
            Msg::InsufficientBalance { available, needed } => (S::CONFLICT, "insufficient_balance", {
                let (a, n) = (crate::coins::format_coins(*available), crate::coins::format_coins(*needed));
                match lang {
                    Lang::En => format!("Insufficient balance: {a} coins available, {n} needed"),
                    Lang::Zh => format!("余额不足：可用 {a} 币，需要 {n} 币"),
                }.into()
            }),
            Msg::AmountInvalid => (S::BAD_REQUEST, "amount_invalid", the(lang, "The amount must be a whole number of cents, at least 1", "金额必须是至少为 1 的整数（单位：分）")),
            Msg::MemoInvalid => (S::BAD_REQUEST, "memo_invalid", the(lang, "The memo must be at most 200 characters on one line", "备注最多 200 个字符，且不能换行")),
            Msg::HoldNotFound => (S::NOT_FOUND, "hold_not_found", the(lang, "Hold not found", "冻结记录不存在")),
            Msg::HoldResolved => (S::CONFLICT, "hold_resolved", the(lang, "This hold has already been captured, released or expired", "该冻结已被扣款、释放或已过期")),
            Msg::CaptureExceedsHold { left, asked } => (S::CONFLICT, "capture_exceeds_hold", {
                let (l, a) = (crate::coins::format_coins(*left), crate::coins::format_coins(*asked));
                match lang {
                    Lang::En => format!("The hold has only {l} coins left, {a} asked"),
                    Lang::Zh => format!("冻结金额仅剩 {l} 币，请求 {a} 币"),
                }.into()
            }),
            Msg::IdempotencyKeyInvalid => (S::BAD_REQUEST, "idempotency_key_invalid", the(lang,
                "The Idempotency-Key header must be 1-255 visible ASCII characters",
                "Idempotency-Key 请求头须为 1-255 个可见 ASCII 字符",
            )),
            Msg::IdempotencyKeyReused => (S::CONFLICT, "idempotency_key_reused", the(lang, "This Idempotency-Key was already used with a different request", "该 Idempotency-Key 已用于另一个不同的请求")),
            Msg::IdempotencyKeyInProgress => (S::CONFLICT, "idempotency_key_in_progress", the(lang,
                "A request with this Idempotency-Key is still being processed, please retry shortly",
                "使用该 Idempotency-Key 的请求仍在处理中，请稍后重试",
            )),
            Msg::TopUpCodeInvalid => (S::BAD_REQUEST, "top_up_code_invalid", the(lang, "Enter the top-up code as it was given to you", "请按收到的原样输入充值码")),
            Msg::TopUpCodeNotFound => (S::NOT_FOUND, "top_up_code_not_found", the(lang, "This top-up code does not exist", "该充值码不存在")),
            Msg::TopUpCodeUsed => (S::CONFLICT, "top_up_code_used", the(lang, "This top-up code has already been used", "该充值码已被使用")),
            Msg::TopUpCodeExpired => (S::CONFLICT, "top_up_code_expired", the(lang, "This top-up code has expired", "该充值码已过期")),
            Msg::CodeCountInvalid => (S::BAD_REQUEST, "code_count_invalid", the(lang, "Issue between 1 and 10,000 codes at once", "一次可发放 1 到 10,000 个充值码")),
            Msg::CodeStateInvalid => (S::BAD_REQUEST, "code_state_invalid", the(lang, "The state must be unused, redeemed or expired", "状态须为未使用、已兑换或已过期")),
            Msg::CodeExpiryInvalid => (S::BAD_REQUEST, "code_expiry_invalid", the(lang, "The expiry must be a time in the future", "到期时间必须晚于现在")),
            Msg::FeePercentInvalid => (S::BAD_REQUEST, "fee_percent_invalid", the(lang, "The market fee must be a whole percent from 0 to 100", "市场费率须为 0 到 100 之间的整数百分比")),
            Msg::SignupBonusInvalid => (S::BAD_REQUEST, "signup_bonus_invalid", the(lang, "The sign-up bonus must be 0 or more coins", "注册奖励须为 0 或更多币")),
            Msg::DownloadLinkInvalid => (S::BAD_REQUEST, "download_link_invalid", the(lang,
                "A download link must be empty or an http(s) address of at most 500 characters",
                "下载链接须为空，或不超过 500 个字符的 http(s) 地址",
            )),
            Msg::LowBalanceHoursInvalid => (S::BAD_REQUEST, "low_balance_hours_invalid", the(lang, "The low-balance notice must be between 0 and 720 hours", "余额不足提醒须在 0 到 720 小时之间")),
            Msg::TopUpTextInvalid => (S::BAD_REQUEST, "top_up_text_invalid", the(lang, "The text must be at most 2,000 characters", "文字最多 2,000 个字符")),
            Msg::UserNotFound => (S::NOT_FOUND, "user_not_found", the(lang, "User not found", "用户不存在")),
            Msg::FriendRequestToSelf => (S::BAD_REQUEST, "friend_request_to_self", the(lang, "You cannot send a friend request to yourself", "不能向自己发送好友请求")),
            Msg::FriendRequestWaiting => (S::CONFLICT, "friend_request_waiting", the(lang, "A friend request to this person is already waiting", "已向对方发送过好友请求，正在等待对方处理")),
            Msg::FriendRequestFromThem => (S::CONFLICT, "friend_request_from_them", the(lang, "This person has already sent you a friend request: accept it instead", "对方已向您发送好友请求，请直接接受")),
            Msg::AlreadyFriends => (S::CONFLICT, "already_friends", the(lang, "You are already friends", "你们已经是好友")),
            Msg::FriendRequestNotFound => (S::NOT_FOUND, "friend_request_not_found", the(lang, "Friend request not found", "好友请求不存在")),
            Msg::FriendRequestHandled => (S::CONFLICT, "friend_request_handled", the(lang, "This friend request has already been handled", "该好友请求已处理")),
            Msg::UnblockFirst => (S::CONFLICT, "unblock_first", the(lang, "You blocked this person: unblock them first", "您已屏蔽此人，请先取消屏蔽")),
            Msg::BlockSelf => (S::BAD_REQUEST, "block_self", the(lang, "You cannot block yourself", "不能屏蔽自己")),
            Msg::FriendNotFound => (S::NOT_FOUND, "friend_not_found", the(lang, "Friend not found", "好友不存在")),
            Msg::TagNameInvalid => (S::BAD_REQUEST, "tag_name_invalid", the(lang, "Tag name must be 1-30 characters", "标签名须为 1-30 个字符")),
            Msg::TagExists => (S::CONFLICT, "tag_exists", the(lang, "A tag with this name already exists", "已存在同名标签")),
            Msg::TagNotFound => (S::NOT_FOUND, "tag_not_found", the(lang, "Tag not found", "标签不存在")),
            Msg::TooManyTags => (S::CONFLICT, "too_many_tags", the(lang, "You can have at most 100 tags", "最多只能创建 100 个标签")),
            Msg::MessageRequired => (S::BAD_REQUEST, "message_required", the(lang, "Please enter a message", "请输入消息内容")),
            Msg::MessageTooLong => (S::BAD_REQUEST, "message_too_long", the(lang, "A message can be at most 2000 characters", "消息最多 2000 个字符")),
            Msg::FriendsOnly => (S::FORBIDDEN, "friends_only", the(lang, "You can only send messages to your friends", "只能给好友发送消息")),
            Msg::ConversationNotFound => (S::NOT_FOUND, "conversation_not_found", the(lang, "Conversation not found", "会话不存在")),
            Msg::RecipientRequired => (S::BAD_REQUEST, "recipient_required", the(lang, "Choose who to send the message to", "请选择消息接收人")),
            Msg::DemandsPersonalOnly => (S::FORBIDDEN, "demands_personal_only", the(lang,
                "Demands and orders are for individual operation only: switch to your personal account",
                "需求与订单仅限个人操作：请切换到个人账户",
            )),
            Msg::OrderNotFound => (S::NOT_FOUND, "order_not_found", the(lang, "Order not found", "订单不存在")),
            Msg::DemandNotOpen => (S::CONFLICT, "demand_not_open", the(lang, "This demand has already been taken or closed", "该需求已被接单或已关闭")),
            Msg::OwnDemand => (S::CONFLICT, "own_demand", the(lang, "You cannot take your own demand", "不能接自己发布的需求")),
            Msg::NotDemander => (S::FORBIDDEN, "not_demander", the(lang, "Only the demander can do this", "只有需求方可以执行此操作")),
            Msg::DeviceReserved => (S::CONFLICT, "device_reserved", the(lang, "This device is reserved for an order", "该设备已被订单占用")),
            Msg::OfferPriceChanged { now } => (S::CONFLICT, "offer_price_changed", {
                let n = crate::coins::format_coins(*now);
                match lang {
                    Lang::En => format!("This offer's price changed: it is now {n} coins per hour. Nothing was held; look at the offers again"),
                    Lang::Zh => format!("该报价已变更：现为每小时 {n} 币。未冻结任何金额，请重新查看报价"),
                }.into()
            }),
            Msg::DistanceNeedsLocation => (S::BAD_REQUEST, "distance_needs_location", the(lang, "A distance limit needs your location", "设置距离限制需要提供您的位置")),
            Msg::OrderActionNotAllowed(action, status) => (S::CONFLICT, "order_action_not_allowed", order_action_not_allowed(*action, *status, lang).into()),
            Msg::PairingCodeIncorrect => (S::BAD_REQUEST, "pairing_code_incorrect", the(lang,
                "The pairing code is wrong: enter the code the box prints next to its device ID",
                "配对码错误：请输入设备在其设备 ID 旁打印的配对码",
            )),
            Msg::ResetLinkInvalid => (S::BAD_REQUEST, "reset_link_invalid", the(lang, "This password reset link is invalid", "密码重置链接无效")),
            Msg::ResetLinkUsed => (S::CONFLICT, "reset_link_used", the(lang, "This password reset link has already been used, please ask for a new one", "该密码重置链接已使用过，请重新获取")),
            Msg::ResetLinkExpired => (S::CONFLICT, "reset_link_expired", the(lang, "This password reset link has expired, please ask for a new one", "该密码重置链接已过期，请重新获取")),
            Msg::RedirectInvalid => (S::BAD_REQUEST, "redirect_invalid", the(lang, "The page to return to must be a path of this site", "返回页面必须是本站的路径")),
            Msg::ApiKeyNameRequired => (S::BAD_REQUEST, "api_key_name_required", the(lang, "Please name the key", "请输入密钥名称")),
            Msg::ApiKeyNameInvalid => (S::BAD_REQUEST, "api_key_name_invalid", the(lang, "The key name must be at most 64 characters, without control characters", "密钥名称最多 64 个字符，且不能包含控制字符")),
            Msg::ApiKeyExpiryInvalid => (S::BAD_REQUEST, "api_key_expiry_invalid", the(lang,
                "The expiry must be a date and time such as 2030-01-31T00:00:00Z",
                "过期时间必须是日期和时间，例如 2030-01-31T00:00:00Z",
            )),
            Msg::ApiKeyExpiryPast => (S::BAD_REQUEST, "api_key_expiry_past", the(lang, "The expiry must be in the future", "过期时间必须晚于当前时间")),
            Msg::TooManyApiKeys(max) => (S::CONFLICT, "too_many_api_keys", match lang {
                Lang::En => format!("You can have at most {max} API keys: revoke one first"),
                Lang::Zh => format!("最多只能有 {max} 个 API 密钥：请先撤销一个"),
            }.into()),
            Msg::ApiKeyNotFound => (S::NOT_FOUND, "api_key_not_found", the(lang, "API key not found", "API 密钥不存在")),
            Msg::ApiKeyInvalid => (S::UNAUTHORIZED, "api_key_invalid", the(lang, "This API key is not valid: create a new one on your account page", "此 API 密钥无效：请在账户页面新建一个")),
            Msg::SessionRequired => (S::FORBIDDEN, "session_required", the(lang, "Sign in to do this: an API key cannot", "请登录后操作：API 密钥不能执行此操作")),
            Msg::ApiKeyExpiryTooFar(days) => (S::BAD_REQUEST, "api_key_expiry_too_far", match lang {
                Lang::En => format!("A key can live at most {days} days"),
                Lang::Zh => format!("密钥的有效期最长为 {days} 天"),
            }.into()),
            Msg::ApiKeyScopeUnknown => (S::BAD_REQUEST, "api_key_scope_unknown", the(lang, "A key's scopes are read, apps, wallet and ops", "密钥的权限只能是 read、apps、wallet 和 ops")),
            Msg::ApiKeyScopesRequired => (S::BAD_REQUEST, "api_key_scopes_required", the(lang, "Choose at least one thing the key may do", "请至少选择一项密钥权限")),
            Msg::ApiKeyOpsOperatorOnly => (S::FORBIDDEN, "api_key_ops_operator_only", the(lang,
                "Only an operator, in their personal account, can make a key for the operator's console",
                "只有运营者在个人账户中才能创建用于运营控制台的密钥",
            )),
            Msg::ApiKeyOpsConfirm => (S::BAD_REQUEST, "api_key_ops_confirm", the(lang, "Enter your password to make a key for the operator's console", "请输入您的密码以创建用于运营控制台的密钥")),
            Msg::ApiKeyScope(scope) => (S::FORBIDDEN, "api_key_scope", match lang {
                Lang::En => format!("This API key may not do this: it needs the \"{scope}\" scope"),
                Lang::Zh => format!("此 API 密钥无权执行此操作：需要“{scope}”权限"),
            }.into()),
            Msg::TwoFactorRequired => (S::UNAUTHORIZED, "two_factor_required", the(lang, "Enter the 6-digit code from your authenticator app", "请输入身份验证器应用中的 6 位验证码")),
            Msg::TwoFactorCodeRequired => (S::BAD_REQUEST, "two_factor_code_required", the(lang,
                "Enter the 6-digit code from your authenticator app, or a recovery code",
                "请输入身份验证器应用中的 6 位验证码，或一个恢复码",
            )),
            Msg::TwoFactorCodeInvalid => (S::BAD_REQUEST, "two_factor_code_invalid", the(lang, "That code is not right, or it was already used", "验证码不正确或已被使用")),
            Msg::TwoFactorChallengeInvalid => (S::BAD_REQUEST, "two_factor_challenge_invalid", the(lang, "This sign-in has expired: enter your email and password again", "本次登录已过期：请重新输入邮箱和密码")),
            Msg::TwoFactorAlreadyOn => (S::CONFLICT, "two_factor_already_on", the(lang, "Two-factor sign-in is already on", "两步验证已开启")),
            Msg::TwoFactorNotOn => (S::CONFLICT, "two_factor_not_on", the(lang, "Two-factor sign-in is not on", "两步验证未开启")),
            Msg::TwoFactorNotStarted => (S::CONFLICT, "two_factor_not_started", the(lang, "Start the set-up again: scan a new QR code first", "请重新开始设置：先扫描新的二维码")),
            Msg::TwoFactorEnrolmentRequired => (S::FORBIDDEN, "two_factor_enrolment_required", the(lang,
                "Turn on two-factor sign-in on your account page first: it is required for operators and company administrators",
                "请先在账户页面开启两步验证：运营者和企业管理员必须开启",
            )),
            Msg::TwoFactorStepUp(coins) => (S::BAD_REQUEST, "two_factor_step_up", match lang {
                Lang::En => format!("Moving more than {coins} coins needs a current code from your authenticator app (field code)"),
                Lang::Zh => format!("转移超过 {coins} 币需要身份验证器应用中的当前验证码（字段 code）"),
            }.into()),
            Msg::NotOperator => (S::FORBIDDEN, "not_operator", the(lang, "Only the market's operators can do this", "只有市场运营者可以执行此操作")),
            Msg::LastOperator => (S::CONFLICT, "last_operator", the(lang, "The market must keep at least one operator", "市场至少需要保留一位运营者")),
            Msg::AccountSuspended(reason) => (S::FORBIDDEN, "account_suspended", match lang {
                Lang::En => format!("This account is suspended: {reason}"),
                Lang::Zh => format!("该账户已被停用：{reason}"),
            }.into()),
            Msg::SuspendSelf => (S::CONFLICT, "suspend_self", the(lang, "You cannot suspend yourself", "不能停用自己的账户")),
            Msg::SuspendReasonInvalid => (S::BAD_REQUEST, "suspend_reason_invalid", the(lang, "Give a reason of 1 to 500 characters", "请填写 1 到 500 个字符的原因")),
            Msg::AuditActionInvalid => (S::BAD_REQUEST, "audit_action_invalid", the(lang, "Unknown action", "未知的操作类型")),
            Msg::AppIdInvalid => (S::BAD_REQUEST, "app_id_invalid", the(lang,
                "The app id must be 1 to 64 lowercase letters, digits and single dashes, e.g. my-app",
                "应用 ID 须为 1 到 64 个小写字母、数字和单个连字符，例如 my-app",
            )),
            Msg::AppIdTaken => (S::CONFLICT, "app_id_taken", the(lang, "An app with this id already exists", "该应用 ID 已存在")),
            Msg::StaleEdit => (S::CONFLICT, "stale_edit", the(lang,
                "This app changed since you opened the form (an upload or another edit): it has been reloaded, check it and save again",
                "打开表单后此应用已有改动（上传或其他编辑）：已重新载入，请检查后再保存",
            )),
            Msg::BackupSqliteOnly => (S::CONFLICT, "backup_sqlite_only", the(lang, "This market's database is PostgreSQL: back it up with pg_dump", "本市场的数据库是 PostgreSQL：请用 pg_dump 备份")),
            Msg::AppNameInvalid => (S::BAD_REQUEST, "app_name_invalid", the(lang, "Give the name in English and Chinese, 1 to 60 characters each", "请填写中英文名称，各 1 到 60 个字符")),
            Msg::AppSummaryInvalid => (S::BAD_REQUEST, "app_summary_invalid", the(lang, "Give the summary in English and Chinese, 1 to 200 characters each", "请填写中英文简介，各 1 到 200 个字符")),
            Msg::AppDescriptionInvalid => (S::BAD_REQUEST, "app_description_invalid", the(lang, "The description may be at most 5000 characters", "描述最多 5000 个字符")),
            Msg::AppPublisherInvalid => (S::BAD_REQUEST, "app_publisher_invalid", the(lang, "The publisher must be 1 to 60 characters", "发布者须为 1 到 60 个字符")),
            Msg::AppVersionInvalid => (S::BAD_REQUEST, "app_version_invalid", the(lang, "The version must be 1 to 40 letters, digits, dots, dashes or plus signs", "版本须为 1 到 40 个字母、数字、点、连字符或加号")),
            Msg::AppChoiceInvalid(field, options) => (S::BAD_REQUEST, "app_choice_invalid", match lang {
                Lang::En => format!("{field} must be one of: {}", options.join(", ")),
                Lang::Zh => format!("{field} 须为以下之一：{}", options.join("、")),
            }.into()),
            Msg::AppRequirementsInvalid => (S::BAD_REQUEST, "app_requirements_invalid", the(lang,
                "Requirements are whole numbers: at least 1 CPU core, memory and disk of at least 0 bytes, 0 to 16 GPUs",
                "需求须为整数：至少 1 个 CPU 核心，内存和磁盘不小于 0 字节，GPU 0 到 16 个",
            )),
            Msg::AppImageInvalid => (S::BAD_REQUEST, "app_image_invalid", the(lang,
                "The image must be a reference with a tag, e.g. registry.example.com/team/app:1.0",
                "镜像须为带标签的引用，例如 registry.example.com/team/app:1.0",
            )),
            Msg::AppPortsInvalid => (S::BAD_REQUEST, "app_ports_invalid", the(lang,
                "Ports are container ports 1 to 65535, each once, TCP or UDP, with at most one web port (TCP) and names of at most 40 characters",
                "端口须为 1 到 65535 的容器端口，各出现一次，TCP 或 UDP，最多一个网页端口（TCP），名称最多 40 个字符",
            )),
            Msg::AppVolumesInvalid => (S::BAD_REQUEST, "app_volumes_invalid", the(lang,
                "A volume needs a name (lowercase letters, digits and dashes, each name once) and an absolute path inside the container",
                "数据卷须有名称（小写字母、数字和连字符，不可重复）和容器内的绝对路径",
            )),
            Msg::AppHealthInvalid => (S::BAD_REQUEST, "app_health_invalid", the(lang, "The health path must start with / and needs a web port", "健康检查路径须以 / 开头，且需要一个网页端口")),
            Msg::AppIconMissing => (S::BAD_REQUEST, "app_icon_missing", the(lang, "Choose an image file for the icon", "请为图标选择图片文件")),
            Msg::AppIconType => (S::UNSUPPORTED_MEDIA_TYPE, "app_icon_type", the(lang, "The icon must be a PNG, JPEG or WebP image", "图标须为 PNG、JPEG 或 WebP 图片")),
            Msg::AppIconTooLarge => (S::PAYLOAD_TOO_LARGE, "app_icon_too_large", the(lang, "The icon must be at most 256 KB", "图标不能超过 256 KB")),
            Msg::ImageArchiveMissing => (S::BAD_REQUEST, "image_archive_missing", the(lang, "Choose an image archive made with docker save (.tar)", "请选择用 docker save 生成的镜像归档（.tar）")),
            Msg::ImageArchiveInvalid => (S::UNSUPPORTED_MEDIA_TYPE, "image_archive_invalid", the(lang,
                "This is not an image archive made with docker save (a tar with manifest.json and tagged images)",
                "这不是用 docker save 生成的镜像归档（须为含 manifest.json 和带标签镜像的 tar）",
            )),
            Msg::ImageArchiveTooLarge(max) => (S::PAYLOAD_TOO_LARGE, "image_archive_too_large", {
                let size = bytes_text(*max);
                match lang {
                    Lang::En => format!("The archive is larger than this market accepts ({size})"),
                    Lang::Zh => format!("归档超过本市场允许的大小（{size}）"),
                }.into()
            }),
            Msg::SnapshotNotFound => (S::NOT_FOUND, "snapshot_not_found", the(lang, "Snapshot not found", "未找到该快照")),
            Msg::SnapshotNotReady => (S::CONFLICT, "snapshot_not_ready", the(lang, "This snapshot is not ready (still being made, or it failed)", "该快照尚未就绪（仍在生成或已失败）")),
            Msg::SnapshotNotOnMarket => (S::CONFLICT, "snapshot_not_on_market", the(lang, "This snapshot is only on its box: keep it on the market first, then download it", "该快照仅保存在设备上：请先保存到市场，再下载")),
            Msg::SnapshotRestoring => (S::CONFLICT, "snapshot_restoring", the(lang, "A restore from this snapshot is under way: wait until it finishes", "正在从该快照恢复：请等待恢复完成")),
            Msg::SnapshotBoxOffline => (S::CONFLICT, "snapshot_box_offline", the(lang, "The box holding this snapshot is offline", "保存该快照的设备已离线")),
            Msg::SnapshotQuota(max) => (S::PAYLOAD_TOO_LARGE, "snapshot_quota", {
                let size = bytes_text(*max);
                match lang {
                    Lang::En => format!("Your snapshots on the market may use at most {size}: delete some first"),
                    Lang::Zh => format!("您保存在市场上的快照最多占用 {size}：请先删除一些"),
                }.into()
            }),
            Msg::SnapshotBoxQuota(max) => (S::PAYLOAD_TOO_LARGE, "snapshot_box_quota", {
                let size = bytes_text(*max);
                match lang {
                    Lang::En => format!("This app's snapshots on its box may use at most {size}: delete some first"),
                    Lang::Zh => format!("该应用在设备上的快照最多占用 {size}：请先删除一些"),
                }.into()
            }),
            Msg::SnapshotOffset => (S::CONFLICT, "snapshot_offset", the(lang, "This piece does not start where the market's copy stands", "该数据块的起点与市场已收到的位置不符")),
            Msg::SnapshotChecksum => (S::UNPROCESSABLE_ENTITY, "snapshot_checksum", the(lang, "The snapshot that arrived does not match its sha256: it was discarded", "收到的快照与其 sha256 不符，已丢弃")),
        }
    }
}

/// A row's fixed text in `lang`.
fn the(lang: Lang, en: &'static str, zh: &'static str) -> Cow<'static, str> {
    Cow::Borrowed(match lang {
        Lang::En => en,
        Lang::Zh => zh,
    })
}

/// "This device does not have enough free resources: CPU cores need 4, free 2; …"
fn requirements_short(gaps: &[(&'static str, i64, i64)], lang: Lang) -> String {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    let parts: Vec<String> = gaps
        .iter()
        .map(|(field, need, have)| {
            let bytes = field.ends_with("_bytes");
            let amount = |v: &i64| if bytes { format!("{:.0} GB", (*v as f64 / GIB).ceil()) } else { v.to_string() };
            let (en, zh) = match *field {
                "cpu_cores" => ("CPU cores", "CPU 核心"),
                "memory_bytes" => ("memory", "内存"),
                "disk_bytes" => ("disk", "磁盘"),
                _ => ("GPUs", "GPU"),
            };
            match lang {
                Lang::En => format!("{en} need {}, free {}", amount(need), amount(have)),
                Lang::Zh => format!("{zh}需要 {}，空闲 {}", amount(need), amount(have)),
            }
        })
        .collect();
    match lang {
        Lang::En => format!("This device does not have enough free resources: {}", parts.join("; ")),
        Lang::Zh => format!("此设备的空闲资源不足：{}", parts.join("；")),
    }
}

/// "Cannot confirm an order that is order pending" / "订单状态为“待接单”，无法确认"
fn order_action_not_allowed(action: Words, status: Words, lang: Lang) -> String {
    match lang {
        Lang::En => format!("Cannot {} an order that is {}", action.en, status.en),
        Lang::Zh => format!("订单状态为“{}”，无法{}", status.zh, action.zh),
    }
}

/// A size for people: "8 GiB", "1.5 MiB".
fn bytes_text(n: u64) -> String {
    let (unit, name) = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")].into_iter().find(|(u, _)| n >= *u).unwrap_or((1, "bytes"));
    format!("{} {name}", (n as f64 / unit as f64 * 10.0).round() / 10.0)
}

//! Every message the market can send (its status, stable name and texts: one row each in
//! `table.rs`).

use crate::lang::Words;

/// Every message the market can send. Its status and stable name: [`Msg::code`]; its texts:
/// [`Msg::text`] (both from the one table, `table.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    // generic
    NotFound,
    ApiNotFound,
    MethodNotAllowed,
    MalformedJson,
    JsonContentType,
    BodyTooLarge,
    BodyTooSlow,
    Internal,
    TooManyRequests,
    Unauthorized,
    SessionExpired,
    Forbidden,
    NotAdmin,
    InvalidField(&'static str),
    /// A JSON body whose value at this path (`metrics.cpu_percent`, `acks[0].ok`) is wrong.
    InvalidBodyField(String),
    /// A text input (body field, query parameter, path segment) holding a control character.
    ControlCharacters(String),
    InvalidPagination,
    // identity (docs/product.md §5, word for word where it names them)
    EmailRequired,
    EmailFormatInvalid,
    EmailTooLong,
    EmailTaken,
    EmailNotVerified,
    UsernameRequired,
    UsernameFormatInvalid,
    PasswordRequired,
    PasswordFormatInvalid,
    PasswordIncorrect,
    PasswordMismatch,
    CredentialsIncorrect,
    AgreementRequired,
    VerificationInvalid,
    VerificationExpired,
    RefreshTokenInvalid,
    RefreshTokenReused,
    NotCompanyMember,
    AvatarTooLarge,
    AvatarType,
    AvatarMissing,
    AccountNotDeletable,
    AliasFormatInvalid,
    // companies
    CompanyNameInvalid,
    CompanyIdRequired,
    CompanyNotFound,
    CompanyNotDeletable,
    NoPermissionManageDevices,
    NoPermissionApps,
    InvitationExpired,
    InvitationNotForYou,
    InvitationNotFound,
    RecordNotPending,
    AlreadyMember,
    AlreadyApplied,
    LastAdmin,
    MemberNotFound,
    ResourceNotFound,
    CompanyContextRequired,
    RecordNotFound,
    AssignmentNotFound,
    // devices, orders
    InvalidDeviceId,
    DeviceAlreadyBound,
    OrderRequirementsNotSatisfied,
    ModificationNotSupported,
    SharingModeForbids,
    DeviceNotRunning,
    NoCapacity,
    DeviceNotFound,
    DeviceSecretInvalid,
    RegistrationTokenInvalid,
    /// An agent speaking a protocol version this market does not know (what it sent:
    /// zmarket_protocol::version).
    AgentProtocolUnsupported(String),
    HostHasMachines,
    ZcloudRentalNotFound,
    ZcloudRentalEnding,
    /// `/downloads/<file>` for a platform this market does not serve (only Linux x86-64).
    DownloadNotServed,
    // market
    AppNotFound,
    KeywordTooLong,
    // notifications
    NotificationNotFound,
    // apps on devices
    AppNotInstallable,
    NoUpdate,
    NoGpuRuntime,
    /// Every GPU of the box that the app could be given is held by another installation or machine.
    NoFreeGpu,
    /// The app's image needs a newer CUDA than the box's driver runs: (need, have).
    CudaTooOld(String, String),
    /// A GPU of the box failed its last verification: it is not offered for GPU apps.
    GpuFailedCheck,
    AppAlreadyInstalled,
    /// What a device lacks for an app: (cpu_cores | memory_bytes | disk_bytes | gpu_count, need, have).
    RequirementsShort(Vec<(&'static str, i64, i64)>),
    InstallationNotFound,
    /// The action and the installation's status (`AppStatus::words`).
    ActionNotAllowed(Words, Words),
    AppOffline,
    // connect (issue 22)
    DeviceOffline,
    AppNotRunning,
    AppHasNoWeb,
    PortNotDeclared,
    PortNotAllowed,
    OpenLinkInvalid,
    TooManyStreams,
    TooManySockets,
    /// `GET /metrics` from an address outside `[server] metrics_allow`.
    MetricsNotAllowed,
    AccessEnded,
    WebSocketRequired,
    AppSignInRequired,
    AppCrossOrigin,
    /// Why a stream to a box ended or could not open (a `frames::CloseReason`'s name).
    StreamEnded(&'static str),
    /// The app's container took the connection and gave no HTTP answer.
    AppNoAnswer,
    /// The instance holding the device's channel (PostgreSQL, several instances) does not answer.
    InstanceUnreachable,
    /// `/readyz` while the database does not answer.
    DatabaseUnreachable,
    AiComputeOffline,
    LiteAppNeedsGpu,
    LiteAppRentable,
    StopLiteApps,
    RentOwnDevice,
    RentWithinCompany,
    DeviceNotRentable,
    RentalSpent,
    RentalNotExtendable,
    // wallet (amounts in cents)
    InsufficientBalance { available: i64, needed: i64 },
    AmountInvalid,
    MemoInvalid,
    HoldNotFound,
    HoldResolved,
    CaptureExceedsHold { left: i64, asked: i64 },
    IdempotencyKeyInvalid,
    IdempotencyKeyReused,
    IdempotencyKeyInProgress,
    TopUpCodeInvalid,
    TopUpCodeNotFound,
    TopUpCodeUsed,
    TopUpCodeExpired,
    // the operator's codes and settings
    CodeCountInvalid,
    CodeStateInvalid,
    CodeExpiryInvalid,
    FeePercentInvalid,
    SignupBonusInvalid,
    DownloadLinkInvalid,
    LowBalanceHoursInvalid,
    TopUpTextInvalid,
    // friends, tags, messages
    UserNotFound,
    FriendRequestToSelf,
    FriendRequestWaiting,
    FriendRequestFromThem,
    AlreadyFriends,
    FriendRequestNotFound,
    FriendRequestHandled,
    UnblockFirst,
    BlockSelf,
    FriendNotFound,
    TagNameInvalid,
    TagExists,
    TagNotFound,
    TooManyTags,
    MessageRequired,
    MessageTooLong,
    FriendsOnly,
    ConversationNotFound,
    RecipientRequired,
    // demands and orders
    DemandsPersonalOnly,
    OrderNotFound,
    DemandNotOpen,
    OwnDemand,
    NotDemander,
    DeviceReserved,
    /// The rent's offer now asks another price per hour (cents) than the one the person saw.
    OfferPriceChanged { now: i64 },
    DistanceNeedsLocation,
    /// The action (confirm, finish, cancel) and the order's status.
    OrderActionNotAllowed(Words, Words),
    PairingCodeIncorrect,
    ResetLinkInvalid,
    ResetLinkUsed,
    ResetLinkExpired,
    RedirectInvalid,
    // personal API keys
    ApiKeyNameRequired,
    ApiKeyNameInvalid,
    ApiKeyExpiryInvalid,
    ApiKeyExpiryPast,
    TooManyApiKeys(u64),
    ApiKeyNotFound,
    ApiKeyInvalid,
    SessionRequired,
    /// The longest life a key may have, in days.
    ApiKeyExpiryTooFar(u64),
    ApiKeyScopeUnknown,
    ApiKeyScopesRequired,
    ApiKeyOpsOperatorOnly,
    ApiKeyOpsConfirm,
    /// The scope the request needs (its stable name: `read`, `apps`, `wallet`, `ops`).
    ApiKeyScope(&'static str),
    // two-factor sign-in (issue 43, item 12)
    /// The password was right; the code is asked next (`data`: the challenge).
    TwoFactorRequired,
    TwoFactorCodeRequired,
    TwoFactorCodeInvalid,
    TwoFactorChallengeInvalid,
    TwoFactorAlreadyOn,
    TwoFactorNotOn,
    TwoFactorNotStarted,
    TwoFactorEnrolmentRequired,
    /// A money move above this many coins (formatted) asks for a current code in `code`.
    TwoFactorStepUp(String),
    // the operator's console
    NotOperator,
    LastOperator,
    /// The reason the operator gave.
    AccountSuspended(String),
    SuspendSelf,
    SuspendReasonInvalid,
    AuditActionInvalid,
    // publishing apps (the operator's console)
    AppIdInvalid,
    AppIdTaken,
    StaleEdit,
    BackupSqliteOnly,
    AppNameInvalid,
    AppSummaryInvalid,
    AppDescriptionInvalid,
    AppPublisherInvalid,
    AppVersionInvalid,
    /// The field and the values it may take.
    AppChoiceInvalid(&'static str, Vec<String>),
    AppRequirementsInvalid,
    AppImageInvalid,
    AppPortsInvalid,
    AppVolumesInvalid,
    AppHealthInvalid,
    AppIconMissing,
    AppIconType,
    AppIconTooLarge,
    ImageArchiveMissing,
    ImageArchiveInvalid,
    /// The largest archive accepted, in bytes.
    ImageArchiveTooLarge(u64),
    SnapshotNotFound,
    SnapshotNotReady,
    SnapshotNotOnMarket,
    SnapshotRestoring,
    SnapshotBoxOffline,
    /// The most bytes of snapshots one owner keeps on the market.
    SnapshotQuota(u64),
    /// The most bytes of one installation's snapshots on its box.
    SnapshotBoxQuota(u64),
    /// An agent's upload piece does not start where the market's copy stands.
    SnapshotOffset,
    /// An agent's upload did not hash to the snapshot's sha256 (the copy is thrown away).
    SnapshotChecksum,
}

#[cfg(test)]
mod tests {
    /// Every stable name is snake_case and names one message (read off the table itself, so a
    /// new row cannot reuse a name): the string after each row's status.
    #[test]
    fn every_name_is_unique_and_snake_case() {
        let src = include_str!("table.rs");
        let table = &src[src.find("fn row(").unwrap()..src.find("/// A row's fixed text").unwrap()];
        let names: Vec<&str> = table
            .split("S::")
            .skip(1)
            .filter_map(|rest| {
                let after = rest.trim_start_matches(|c: char| c.is_ascii_uppercase() || c == '_').trim_start_matches([',', ' ', '\n']);
                after.strip_prefix('"').and_then(|r| r.split('"').next())
            })
            .collect();
        assert!(names.len() > 200, "{}", names.len());
        let mut seen = std::collections::HashSet::new();
        for n in &names {
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{n}");
            assert!(seen.insert(*n), "{n} names two messages");
        }
    }
}

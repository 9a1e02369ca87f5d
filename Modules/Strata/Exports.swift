// What `import Strata` shows of the engine interface (`StrataStorage`): the way to choose an engine,
// object IDs, the errors, and what a migration reports. Everything else in that module (plans, filters,
// change sets, rows, store schemas, the engine protocols) is for engines and stays out of the user's
// namespace, so a program's own types named `Filter`, `ChangeSet`, `FetchPlan` or `SortKey` never clash
// with Strata's.
@_exported public import struct StrataStorage.EngineConfiguration
@_exported public import enum StrataStorage.InvalidURIReason
@_exported public import struct StrataStorage.MigrationProgress
@_exported public import struct StrataStorage.NativeError
@_exported public import struct StrataStorage.ObjectID
@_exported public import struct StrataStorage.RecordedSchema
@_exported public import enum StrataStorage.SchemaDifference
@_exported public import enum StrataStorage.StrataError
@_exported public import struct StrataStorage.ValidationIssue
@_exported public import struct StrataStorage.VersionConflict

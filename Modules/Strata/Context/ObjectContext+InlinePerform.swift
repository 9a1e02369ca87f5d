import StrataStorage

extension ObjectContext {
    /// Runs `body` as a perform body of this context on the calling thread, now: for the
    /// contexts the core makes itself over a migration's transaction engine, which must be
    /// used on the thread that holds the engine's open transaction. Never used for the contexts
    /// users make (their bodies always run on the context's own queue).
    func performInline<T>(_ body: () throws -> T) throws -> T {
        let token = PerformToken(link: link, outer: PerformScope.innermost)
        _ = token.claim()
        return try runConfined(body, token: token)
    }
}

/// A user's own search filter: a name Strata's engine interface also uses.
public struct Filter: Sendable, Equatable {
    public var text: String
    public init(text: String) { self.text = text }
}

/// A user's own diff of a shopping cart.
public struct ChangeSet: Sendable, Equatable {
    public var added: [String]
    public init(added: [String]) { self.added = added }
}

/// A user's own plan for fetching products from a remote catalogue.
public struct FetchPlan: Sendable, Equatable {
    public var pageSize: Int
    public init(pageSize: Int) { self.pageSize = pageSize }
}

/// A user's own sort key.
public enum SortKey: String, Sendable {
    case price, name
}

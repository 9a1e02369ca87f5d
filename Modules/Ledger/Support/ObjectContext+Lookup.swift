import Strata

extension ObjectContext {
    /// The account a URI string names, with ledger errors for every way that can fail.
    /// Call inside `perform`.
    /// - Throws: ``LedgerError/invalidURI(_:reason:)`` for text that is not an account URI of
    ///   this store, ``LedgerError/unknownAccount(_:)`` when no such account exists.
    func account(uri: String) throws -> Account {
        try ledgerObject(uri: uri, as: Account.self, kind: "an account") { .unknownAccount($0) }
    }

    /// The transaction a URI string names.
    /// - Throws: ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownTransaction(_:)``.
    func transaction(uri: String) throws -> Transaction {
        try ledgerObject(uri: uri, as: Transaction.self, kind: "a transaction") { .unknownTransaction($0) }
    }

    private func ledgerObject<Object: ManagedObject>(
        uri: String, as type: Object.Type, kind: String, missing: (String) -> LedgerError
    ) throws -> Object {
        let id: ObjectID
        do {
            id = try managedObjectID(forURIText: uri)
        } catch StrataError.invalidURI(_, let reason) {
            throw LedgerError.invalidURI(uri, reason: reason.rawValue)
        }
        guard !id.isTemporary else {
            throw LedgerError.invalidURI(uri, reason: InvalidURIReason.temporary.rawValue)
        }
        do {
            return try existingObject(with: id, as: type)
        } catch StrataError.wrongEntity {
            let article = id.entityName.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
            throw LedgerError.invalidURI(uri, reason: "it names \(article) \(id.entityName), not \(kind)")
        } catch StrataError.objectNotFound {
            throw missing(uri)
        }
    }

    /// Saves, reporting a unique-name violation on ``Account`` as
    /// ``LedgerError/duplicateAccountName(_:)``. Conflicts and other errors pass through
    /// unchanged, so `performUnitOfWork` can retry conflicts.
    func saveLedger(accountName: String? = nil) throws {
        do {
            try save()
        } catch StrataError.constraintViolation(let entity, let attributes, _)
            where entity == Account.entityName && attributes == ["name"]
        {
            throw LedgerError.duplicateAccountName(accountName ?? "")
        }
    }
}

public import TokenMintCore

/// A payment the backend accepted, as `fetchTransactions` lists it.
public struct PaymentTransaction: Sendable, Hashable {
    /// The transaction ID.
    public var id: String
    /// The payment means charged.
    public var paymentMeansID: String
    /// The amount in minor units.
    public var amount: Int64
    /// The ISO 4217 currency.
    public var currency: String
    /// `accepted`.
    public var status: String
    /// When it was accepted, seconds since the epoch.
    public var createdAt: Int64

    /// A transaction.
    public init(id: String, paymentMeansID: String, amount: Int64, currency: String, status: String, createdAt: Int64) {
        self.id = id
        self.paymentMeansID = paymentMeansID
        self.amount = amount
        self.currency = currency
        self.status = status
        self.createdAt = createdAt
    }
}

/// The query of `fetchTransactions(page:size:sort:)`: `page` from 1, `size`
/// 1 to 100 (default 20), `sort` keys `property,asc|desc`, the first the
/// most significant.
public struct TransactionQuery: Sendable, Hashable {
    /// The page, from 1.
    public var page: Int
    /// Transactions per page.
    public var size: Int
    /// Sort keys, `property,asc` or `property,desc`.
    public var sort: [String]

    /// A query; each value is checked.
    /// - Throws: `pay.invalidConfiguration` for a page below 1, a size
    ///   outside 1 to 100, or a sort key that is not `property(,asc|desc)`.
    public init(page: Int = 1, size: Int = 20, sort: [String] = []) throws(TokenMintError) {
        guard page >= 1, page <= 1_000_000 else { throw TokenMintError(.pay.invalidConfiguration, "page is 1 to 1000000") }
        guard (1...100).contains(size) else { throw TokenMintError(.pay.invalidConfiguration, "size is 1 to 100") }
        for key in sort {
            let parts = key.split(separator: ",", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), (1...32).contains(parts[0].utf8.count),
                parts[0].utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }),
                parts.count == 1 || ["asc", "desc"].contains(parts[1].lowercased())
            else { throw TokenMintError(.pay.invalidConfiguration, "a sort key is property(,asc|desc), not \(key.prefix(64))") }
        }
        self.page = page
        self.size = size
        self.sort = sort
    }
}

/// One page of transactions, as the seed's `TransactionResponse`.
public struct TransactionResponse: Sendable, Hashable {
    /// The page's transactions.
    public var transactions: [PaymentTransaction]
    /// The page number, from 1.
    public var page: Int
    /// The page size asked for.
    public var size: Int
    /// Transactions in all pages.
    public var totalElements: Int64
    /// Pages in all.
    public var totalPages: Int64
    /// The sort keys in effect.
    public var sort: [String]

    /// A page.
    public init(transactions: [PaymentTransaction], page: Int, size: Int, totalElements: Int64, totalPages: Int64, sort: [String]) {
        self.transactions = transactions
        self.page = page
        self.size = size
        self.totalElements = totalElements
        self.totalPages = totalPages
        self.sort = sort
    }
}

/// What both token kinds are to a host: a string to show or encode.
public protocol Token: Sendable {
    /// The token as text (`01/…` or `02/…`).
    var stringRepresentation: String { get }
}

extension EnrolmentToken: Token {
    /// The token string.
    public var stringRepresentation: String { description }
}

extension PaymentToken: Token {
    /// The token string.
    public var stringRepresentation: String { description }
}

package mail

// NestedMessage is a message of levels nested multiparts, for the tests through Dovecot.
var NestedMessage = nestedMessage

// Package ipfs talks to a Kubo node over its RPC API (HTTP API v0): it adds
// bytes, reads them back, pins and unpins them, and asks the node's version.
//
// The service uses it to hold a copy of every registered envelope's
// ciphertext on the node named by IPFS_ENDPOINT. [Client.Put] adds the bytes
// under the `ipfs add` options that reproduce a given CID ([AddOptionsFor]),
// checks that the CID the node computes is that CID, pins it, and reads it
// back to compare the bytes. A node that cannot be reached or does not answer
// in time gives an error wrapping [ErrUnavailable]; a CID the node computes
// differently gives [ErrCIDMismatch]; a CID no `ipfs add` can produce gives
// [ErrUnsupportedCID]; an answer that is not what Kubo sends (too large, not
// JSON, missing fields) gives [ErrBadResponse]; an error the node reports
// gives [ErrAPI]. Every error is an [*Error] naming the RPC command.
//
// Every response body is read through a limit: JSON answers up to
// [MaxJSONResponse], error bodies up to 4 KiB, `cat` up to the length the
// caller expects plus one byte.
package ipfs

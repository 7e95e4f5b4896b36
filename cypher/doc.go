// Package cypher will hold the Neo4j store: resources, capabilities,
// requirements and bindings as nodes and relationships, with capability
// resolution as one Cypher traversal. It is built by the Neo4j issue and
// must pass the storetest conformance suite unchanged.
package cypher

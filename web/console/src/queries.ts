import { graphql } from "./gql";

// Queries more than one page asks.

// ResourceByKey finds a resource's id by its key.
export const ResourceByKey = graphql(`
  query ResourceByKey($key: String!) {
    resource(key: $key) {
      id
    }
  }
`);

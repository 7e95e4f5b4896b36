/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query Viewer {\n    viewer {\n      actor\n      organization\n      roles\n    }\n  }\n": typeof types.ViewerDocument,
    "\n  query NodeDetail($id: ID!) {\n    viewer {\n      actor\n      roles\n    }\n    operation(id: $id) {\n      id\n      actor\n      intent {\n        constraints\n      }\n      plan {\n        nodes {\n          key\n          type\n          title\n          job {\n            run {\n              runner\n            }\n            controls {\n              retry {\n                maximumAttempts\n              }\n            }\n          }\n        }\n      }\n      gates {\n        node\n        status\n        spec {\n          reason\n          requiredRoles\n          approvals\n        }\n        decisions {\n          actor\n          role\n          approve\n        }\n      }\n      evidence {\n        id\n        producedBy\n        item\n        result\n      }\n      artifacts {\n        id\n        name\n        type\n        sensitivity\n        producedBy\n      }\n    }\n  }\n": typeof types.NodeDetailDocument,
    "\n  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!) {\n    decideGate(input: { operation: $op, node: $node, approve: $approve }) {\n      node\n      status\n    }\n  }\n": typeof types.DecideGateDocument,
    "\n  query OperationDetail($id: ID!) {\n    operation(id: $id) {\n      id\n      action\n      status\n      actor\n      planRevision\n      currentNodes\n      resource {\n        key\n        lifecycleStatus\n        healthStatus\n      }\n      progress {\n        desiredResult\n        currentPhase\n        progress\n        completedNodes\n        totalNodes\n        needsAttention\n        resourceHealth\n      }\n      plan {\n        id\n        revision\n        nodes {\n          key\n          type\n          title\n        }\n        edges {\n          from\n          to\n        }\n      }\n      nodeRuns {\n        node\n        status\n        attempts\n        revision\n      }\n    }\n  }\n": typeof types.OperationDetailDocument,
    "\n  subscription OperationLive($id: ID!, $after: String) {\n    operationEvents(operation: $id, after: $after) {\n      cursor\n      node {\n        __typename\n        sequence\n        type\n        ... on NodeEvent {\n          node\n          runStatus\n          attempt\n        }\n        ... on GateEvent {\n          node\n          runStatus\n        }\n        ... on OperationStatusEvent {\n          operationStatus\n        }\n      }\n    }\n  }\n": typeof types.OperationLiveDocument,
    "\n  query Operations($filter: OperationFilter) {\n    operations(filter: $filter, first: 100) {\n      totalCount\n      edges {\n        node {\n          ...OperationRow\n        }\n      }\n    }\n  }\n": typeof types.OperationsDocument,
    "\n  fragment OperationRow on Operation {\n    id\n    action\n    status\n    actor\n    createdAt\n    resource {\n      key\n    }\n    progress {\n      currentPhase\n      progress\n      needsAttention\n      patchesAwaitingApproval\n    }\n  }\n": typeof types.OperationRowFragmentDoc,
    "\n  subscription OperationsLive {\n    operations {\n      ...OperationRow\n    }\n  }\n": typeof types.OperationsLiveDocument,
};
const documents: Documents = {
    "\n  query Viewer {\n    viewer {\n      actor\n      organization\n      roles\n    }\n  }\n": types.ViewerDocument,
    "\n  query NodeDetail($id: ID!) {\n    viewer {\n      actor\n      roles\n    }\n    operation(id: $id) {\n      id\n      actor\n      intent {\n        constraints\n      }\n      plan {\n        nodes {\n          key\n          type\n          title\n          job {\n            run {\n              runner\n            }\n            controls {\n              retry {\n                maximumAttempts\n              }\n            }\n          }\n        }\n      }\n      gates {\n        node\n        status\n        spec {\n          reason\n          requiredRoles\n          approvals\n        }\n        decisions {\n          actor\n          role\n          approve\n        }\n      }\n      evidence {\n        id\n        producedBy\n        item\n        result\n      }\n      artifacts {\n        id\n        name\n        type\n        sensitivity\n        producedBy\n      }\n    }\n  }\n": types.NodeDetailDocument,
    "\n  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!) {\n    decideGate(input: { operation: $op, node: $node, approve: $approve }) {\n      node\n      status\n    }\n  }\n": types.DecideGateDocument,
    "\n  query OperationDetail($id: ID!) {\n    operation(id: $id) {\n      id\n      action\n      status\n      actor\n      planRevision\n      currentNodes\n      resource {\n        key\n        lifecycleStatus\n        healthStatus\n      }\n      progress {\n        desiredResult\n        currentPhase\n        progress\n        completedNodes\n        totalNodes\n        needsAttention\n        resourceHealth\n      }\n      plan {\n        id\n        revision\n        nodes {\n          key\n          type\n          title\n        }\n        edges {\n          from\n          to\n        }\n      }\n      nodeRuns {\n        node\n        status\n        attempts\n        revision\n      }\n    }\n  }\n": types.OperationDetailDocument,
    "\n  subscription OperationLive($id: ID!, $after: String) {\n    operationEvents(operation: $id, after: $after) {\n      cursor\n      node {\n        __typename\n        sequence\n        type\n        ... on NodeEvent {\n          node\n          runStatus\n          attempt\n        }\n        ... on GateEvent {\n          node\n          runStatus\n        }\n        ... on OperationStatusEvent {\n          operationStatus\n        }\n      }\n    }\n  }\n": types.OperationLiveDocument,
    "\n  query Operations($filter: OperationFilter) {\n    operations(filter: $filter, first: 100) {\n      totalCount\n      edges {\n        node {\n          ...OperationRow\n        }\n      }\n    }\n  }\n": types.OperationsDocument,
    "\n  fragment OperationRow on Operation {\n    id\n    action\n    status\n    actor\n    createdAt\n    resource {\n      key\n    }\n    progress {\n      currentPhase\n      progress\n      needsAttention\n      patchesAwaitingApproval\n    }\n  }\n": types.OperationRowFragmentDoc,
    "\n  subscription OperationsLive {\n    operations {\n      ...OperationRow\n    }\n  }\n": types.OperationsLiveDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      actor\n      organization\n      roles\n    }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer {\n      actor\n      organization\n      roles\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodeDetail($id: ID!) {\n    viewer {\n      actor\n      roles\n    }\n    operation(id: $id) {\n      id\n      actor\n      intent {\n        constraints\n      }\n      plan {\n        nodes {\n          key\n          type\n          title\n          job {\n            run {\n              runner\n            }\n            controls {\n              retry {\n                maximumAttempts\n              }\n            }\n          }\n        }\n      }\n      gates {\n        node\n        status\n        spec {\n          reason\n          requiredRoles\n          approvals\n        }\n        decisions {\n          actor\n          role\n          approve\n        }\n      }\n      evidence {\n        id\n        producedBy\n        item\n        result\n      }\n      artifacts {\n        id\n        name\n        type\n        sensitivity\n        producedBy\n      }\n    }\n  }\n"): (typeof documents)["\n  query NodeDetail($id: ID!) {\n    viewer {\n      actor\n      roles\n    }\n    operation(id: $id) {\n      id\n      actor\n      intent {\n        constraints\n      }\n      plan {\n        nodes {\n          key\n          type\n          title\n          job {\n            run {\n              runner\n            }\n            controls {\n              retry {\n                maximumAttempts\n              }\n            }\n          }\n        }\n      }\n      gates {\n        node\n        status\n        spec {\n          reason\n          requiredRoles\n          approvals\n        }\n        decisions {\n          actor\n          role\n          approve\n        }\n      }\n      evidence {\n        id\n        producedBy\n        item\n        result\n      }\n      artifacts {\n        id\n        name\n        type\n        sensitivity\n        producedBy\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!) {\n    decideGate(input: { operation: $op, node: $node, approve: $approve }) {\n      node\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!) {\n    decideGate(input: { operation: $op, node: $node, approve: $approve }) {\n      node\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OperationDetail($id: ID!) {\n    operation(id: $id) {\n      id\n      action\n      status\n      actor\n      planRevision\n      currentNodes\n      resource {\n        key\n        lifecycleStatus\n        healthStatus\n      }\n      progress {\n        desiredResult\n        currentPhase\n        progress\n        completedNodes\n        totalNodes\n        needsAttention\n        resourceHealth\n      }\n      plan {\n        id\n        revision\n        nodes {\n          key\n          type\n          title\n        }\n        edges {\n          from\n          to\n        }\n      }\n      nodeRuns {\n        node\n        status\n        attempts\n        revision\n      }\n    }\n  }\n"): (typeof documents)["\n  query OperationDetail($id: ID!) {\n    operation(id: $id) {\n      id\n      action\n      status\n      actor\n      planRevision\n      currentNodes\n      resource {\n        key\n        lifecycleStatus\n        healthStatus\n      }\n      progress {\n        desiredResult\n        currentPhase\n        progress\n        completedNodes\n        totalNodes\n        needsAttention\n        resourceHealth\n      }\n      plan {\n        id\n        revision\n        nodes {\n          key\n          type\n          title\n        }\n        edges {\n          from\n          to\n        }\n      }\n      nodeRuns {\n        node\n        status\n        attempts\n        revision\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription OperationLive($id: ID!, $after: String) {\n    operationEvents(operation: $id, after: $after) {\n      cursor\n      node {\n        __typename\n        sequence\n        type\n        ... on NodeEvent {\n          node\n          runStatus\n          attempt\n        }\n        ... on GateEvent {\n          node\n          runStatus\n        }\n        ... on OperationStatusEvent {\n          operationStatus\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription OperationLive($id: ID!, $after: String) {\n    operationEvents(operation: $id, after: $after) {\n      cursor\n      node {\n        __typename\n        sequence\n        type\n        ... on NodeEvent {\n          node\n          runStatus\n          attempt\n        }\n        ... on GateEvent {\n          node\n          runStatus\n        }\n        ... on OperationStatusEvent {\n          operationStatus\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Operations($filter: OperationFilter) {\n    operations(filter: $filter, first: 100) {\n      totalCount\n      edges {\n        node {\n          ...OperationRow\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Operations($filter: OperationFilter) {\n    operations(filter: $filter, first: 100) {\n      totalCount\n      edges {\n        node {\n          ...OperationRow\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment OperationRow on Operation {\n    id\n    action\n    status\n    actor\n    createdAt\n    resource {\n      key\n    }\n    progress {\n      currentPhase\n      progress\n      needsAttention\n      patchesAwaitingApproval\n    }\n  }\n"): (typeof documents)["\n  fragment OperationRow on Operation {\n    id\n    action\n    status\n    actor\n    createdAt\n    resource {\n      key\n    }\n    progress {\n      currentPhase\n      progress\n      needsAttention\n      patchesAwaitingApproval\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription OperationsLive {\n    operations {\n      ...OperationRow\n    }\n  }\n"): (typeof documents)["\n  subscription OperationsLive {\n    operations {\n      ...OperationRow\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
"""Dump Zachary's karate club, Les Misérables and a random directed graph with networkx's results.

Read by ../it/networkx.rs, so the Rust tests need neither Python nor network.

Regenerate from this directory: `python3 make_expected.py` (networkx 3.6, no network needed; both graphs
are built into networkx). PageRank uses networkx's pure-Python implementation (`_pagerank_python`,
the same power iteration as `pagerank`, which needs scipy), so scipy is not required.
"""

import json

import networkx as nx
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python


def per_node(nodes, values):
    return [values[n] for n in nodes]


def dump(name, G, weighted):
    nodes = list(G.nodes())
    ids = [str(n) for n in nodes]
    edges = [[str(u), str(v), float(d.get("weight", 1.0))] for u, v, d in G.edges(data=True)]
    w = "weight" if weighted else None
    first, last = nodes[0], nodes[-1]
    dist = nx.single_source_dijkstra_path_length(G, first, weight="weight")
    path = nx.dijkstra_path(G, first, last, weight="weight")
    directed = G.is_directed()
    comms = nx.community.louvain_communities(G, weight="weight", seed=42)
    comps = nx.weakly_connected_components(G) if directed else nx.connected_components(G)
    out = {
        "name": name,
        "directed": directed,
        "nodes": ids,
        "edges": edges,
        "degree": per_node(nodes, dict(G.degree())),
        "in_degree": per_node(nodes, dict(G.in_degree())) if directed else None,
        "out_degree": per_node(nodes, dict(G.out_degree())) if directed else None,
        "pagerank": per_node(nodes, _pagerank_python(G, alpha=0.85, weight="weight")),
        "betweenness": per_node(nodes, nx.betweenness_centrality(G)),
        "betweenness_weighted": per_node(nodes, nx.betweenness_centrality(G, weight=w)),
        "closeness": per_node(nodes, nx.closeness_centrality(G)),
        "closeness_weighted": per_node(nodes, nx.closeness_centrality(G, distance=w)),
        "clustering": per_node(nodes, nx.clustering(G)),
        "components": [sorted(str(n) for n in c) for c in comps],
        "louvain_modularity": nx.community.modularity(G, comms, weight="weight"),
        # networkx's own spread over seeds 0..19, to show where ours falls.
        "louvain_modularity_range": [
            f(
                nx.community.modularity(G, nx.community.louvain_communities(G, weight="weight", seed=s), weight="weight")
                for s in range(20)
            )
            for f in (min, max)
        ],
        "path_source": str(first),
        "path_target": str(last),
        "distance": per_node(nodes, {n: dist.get(n) for n in nodes}),
        "path": [str(n) for n in path],
        "mst_weight": None if directed else sum(
            d.get("weight", 1.0) for _, _, d in nx.minimum_spanning_tree(G, weight="weight").edges(data=True)
        ),
    }
    with open(f"{name}.json", "w") as f:
        json.dump(out, f, indent=None)
        f.write("\n")


dump("karate", nx.karate_club_graph(), weighted=True)
dump("les_miserables", nx.les_miserables_graph(), weighted=True)

# A directed graph with dangling nodes, several weak components and weights 1..5, for the directed
# normalisations (betweenness, incoming-distance closeness, directed clustering, PageRank).
D = nx.gnp_random_graph(40, 0.06, seed=7, directed=True)
for i, (u, v) in enumerate(D.edges()):
    D[u][v]["weight"] = float(1 + i % 5)
dump("directed_random", D, weighted=True)

"""Wrong answers to chapter 05's exercises, written the way learners write them.

``MUTANTS[exercise_id] = (function whose solution region is replaced, {name: body})``;
each body replaces that function's region (dedented, then put at the region's
indentation). ``test_05_jit_mutants.py`` checks that every one loses points.
"""

RECORD = {
    "class_name_as_op": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(cls.__name__, vargs, vkwargs, values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "never_binds_outputs": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
    """,
    "drops_kwargs": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(op_name(cls), vargs, {}, values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "one_output_only": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
        first = out[0] if isinstance(out, tuple) else out
        value = tracer.graph.new_value(first)
        tracer.graph.create(op_name(cls), vargs, vkwargs, [value], target=cls)
        tracer.bind(first, value)
    """,
    "delegates_to_the_tracer": """
        from minitorch.jit.tracer import Tracer
        Tracer.on_apply(tracer, cls, args, kwargs, out)
    """,
}

RUN_NODES = {
    "no_get_attr": """
        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args[0]
            else:
                args = [env[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: env[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
                result = node.target.apply(*args, **kwargs)
            if len(node.outputs) == 1:
                env[node.outputs[0]] = result
            else:
                env.update(zip(node.outputs, result))
        return [env[v] for v in graph.outputs]
    """,
    "first_output_only": """
        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args[0]
            elif node.op == "get_attr":
                result = attrs[node.args[0]]
            else:
                args = [env[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: env[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
                result = node.target.apply(*args, **kwargs)
            env[node.outputs[0]] = result[0] if isinstance(result, tuple) else result
        return [env[v] for v in graph.outputs]
    """,
    "under_no_grad": """
        env = dict(zip(graph.inputs, inputs))
        with no_grad():
            for node in graph.nodes:
                if node.op == "constant":
                    result = node.args[0]
                elif node.op == "get_attr":
                    result = attrs[node.args[0]]
                else:
                    args = [env[a] if isinstance(a, Value) else a for a in node.args]
                    kwargs = {k: env[v] if isinstance(v, Value) else v
                              for k, v in node.kwargs.items()}
                    result = node.target.apply(*args, **kwargs)
                if len(node.outputs) == 1:
                    env[node.outputs[0]] = result
                else:
                    env.update(zip(node.outputs, result))
        return [env[v].detach() for v in graph.outputs]
    """,
    "delegates_to_run_graph": """
        out = jit.run_graph(graph, inputs, attrs)
        return list(out) if isinstance(out, tuple) else [out]
    """,
}

DCE = {
    "one_forward_walk": """
        g = graph.copy()
        used = set(g.outputs)
        for node in g.nodes:
            used.update(node.inputs)
        g.nodes = [n for n in g.nodes if not is_pure(n) or any(v in used for v in n.outputs)]
        return g
    """,
    "drops_writes": """
        g = graph.copy()
        needed = set(g.outputs)
        kept = []
        for node in reversed(g.nodes):
            if not any(v in needed for v in node.outputs):
                continue
            kept.append(node)
            needed.update(node.inputs)
        g.nodes = kept[::-1]
        return g
    """,
    "changes_its_input": """
        needed = set(graph.outputs)
        kept = []
        for node in reversed(graph.nodes):
            if is_pure(node) and not any(v in needed for v in node.outputs):
                continue
            kept.append(node)
            needed.update(node.inputs)
        graph.nodes = kept[::-1]
        return graph
    """,
    "delegates_to_the_pass": """
        return jit.eliminate_dead_code(graph)
    """,
}

FOLD = {
    "folds_through_grad": """
        g = graph.copy()
        known, new_nodes = {}, []
        for node in g.nodes:
            if node.op == "constant":
                known[node.outputs[0]] = node.args[0]
                new_nodes.append(node)
            elif node.op != "get_attr" and node.inputs and all(v in known for v in node.inputs):
                args = [known[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: known[v] if isinstance(v, Value) else v
                          for k, v in node.kwargs.items()}
                with no_grad():
                    value = node.target.apply(*args, **kwargs)
                known[node.outputs[0]] = value
                new_nodes.append(Node("constant", (value,), outputs=list(node.outputs)))
            else:
                new_nodes.append(node)
        g.nodes = new_nodes
        return g
    """,
    "no_chains": """
        g = graph.copy()
        known = {n.outputs[0]: n.args[0] for n in g.nodes if n.op == "constant"}
        new_nodes = []
        for node in g.nodes:
            ok = (node.op not in ("constant", "get_attr") and node.inputs
                  and all(v in known for v in node.inputs)
                  and not any(isinstance(known[v], Tensor) and known[v].requires_grad
                              for v in node.inputs))
            if ok:
                args = [known[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: known[v] if isinstance(v, Value) else v
                          for k, v in node.kwargs.items()}
                with no_grad():
                    value = node.target.apply(*args, **kwargs)
                new_nodes.append(Node("constant", (value,), outputs=list(node.outputs)))
            else:
                new_nodes.append(node)
        g.nodes = new_nodes
        return g
    """,
    "delegates_to_the_pass": """
        return jit.fold_constants(graph)
    """,
}

CSE = {
    "never_rewrites_inputs": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            if is_pure(node) and node.op != "constant":
                key = node_key(node)
                if key in seen:
                    for old, new in zip(node.outputs, seen[key].outputs):
                        replaced[old] = new
                    continue
                seen[key] = node
            kept.append(node)
        g.nodes = kept
        g.outputs = [replaced.get(v, v) for v in g.outputs]
        return g
    """,
    "outputs_not_rewritten": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            if is_pure(node) and node.op != "constant":
                key = node_key(node)
                if key in seen:
                    for old, new in zip(node.outputs, seen[key].outputs):
                        replaced[old] = new
                    continue
                seen[key] = node
            kept.append(node)
        g.nodes = kept
        return g
    """,
    "key_by_op_and_text": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            if is_pure(node) and node.op != "constant":
                text = [a.name if isinstance(a, Value) else str(a) for a in node.args]
                key = (node.op, str(text))
                if key in seen:
                    for old, new in zip(node.outputs, seen[key].outputs):
                        replaced[old] = new
                    continue
                seen[key] = node
            kept.append(node)
        g.nodes = kept
        g.outputs = [replaced.get(v, v) for v in g.outputs]
        return g
    """,
    "delegates_to_the_pass": """
        return jit.eliminate_common_subexpressions(graph)
    """,
}

GROUPS = {
    "ignores_shapes": """
        group_of, depends, groups = {}, {}, []
        for node in graph.nodes:
            deps = set()
            for v in node.inputs:
                deps |= depends.get(v, set())
            chosen = None
            if fusible(node):
                for v in node.inputs:
                    g = group_of.get(v)
                    if g is None:
                        continue
                    others = [u for u in node.inputs if group_of.get(u) != g]
                    if not any(g in depends.get(u, set()) for u in others):
                        chosen = g
                        break
                if chosen is None:
                    chosen = len(groups)
                    groups.append([])
                groups[chosen].append(node)
            for v in node.outputs:
                if chosen is not None:
                    group_of[v] = chosen
                    depends[v] = deps | {chosen}
                else:
                    depends[v] = deps
        return [g for g in groups if len(g) >= 2]
    """,
    "no_cycle_check": """
        group_of, groups = {}, []
        for node in graph.nodes:
            if not fusible(node):
                continue
            chosen = None
            for v in node.inputs:
                g = group_of.get(v)
                if g is not None and groups[g][0].outputs[0].shape == node.outputs[0].shape:
                    chosen = g
                    break
            if chosen is None:
                chosen = len(groups)
                groups.append([])
            groups[chosen].append(node)
            group_of[node.outputs[0]] = chosen
        return [g for g in groups if len(g) >= 2]
    """,
    "keeps_singletons": """
        group_of, depends, groups = {}, {}, []
        for node in graph.nodes:
            deps = set()
            for v in node.inputs:
                deps |= depends.get(v, set())
            chosen = None
            if fusible(node):
                shape = node.outputs[0].shape
                for v in node.inputs:
                    g = group_of.get(v)
                    if g is None or groups[g][0].outputs[0].shape != shape:
                        continue
                    others = [u for u in node.inputs if group_of.get(u) != g]
                    if not any(g in depends.get(u, set()) for u in others):
                        chosen = g
                        break
                if chosen is None:
                    chosen = len(groups)
                    groups.append([])
                groups[chosen].append(node)
            for v in node.outputs:
                if chosen is not None:
                    group_of[v] = chosen
                    depends[v] = deps | {chosen}
                else:
                    depends[v] = deps
        return groups
    """,
    "delegates_to_the_pass": """
        return jit.group_elementwise(graph)
    """,
}

GUARDS = {
    "shape_only": """
        for guard, a in zip(spec["args"], args):
            if guard["kind"] == "tensor" and tuple(a.shape) != tuple(guard["shape"]):
                return f"tensor '{guard['name']}' size mismatch at index 0"
        return None
    """,
    "no_grad_mode": """
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            if a.ndim != len(guard["shape"]):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(guard["shape"], a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "equal_values_of_any_type": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            if a.ndim != len(guard["shape"]):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(guard["shape"], a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "always_a_message": """
        return ("grad mode or 'x' size mismatch at index 0 "
                "(ndim, dtype, requires_grad, value of 'n')")
    """,
    "delegates_to_compile": """
        from minitorch.jit.compile import grad_mode_guard, tensor_guards, value_guard
        if grad_enabled != spec["grad_enabled"]:
            return grad_mode_guard().check((), {}) or "grad mode mismatch"
        for i, (guard, a) in enumerate(zip(spec["args"], args)):
            if guard["kind"] == "value":
                problem = value_guard(guard["name"], i, guard["value"]).check(tuple(args), {})
            else:
                like = minitorch.zeros(*guard["shape"], dtype=getattr(minitorch, guard["dtype"]))
                if guard["requires_grad"]:
                    like.requires_grad_()
                problem = None
                for g in tensor_guards(guard["name"], i, like):
                    problem = problem or g.check(tuple(args), {})
            if problem:
                return problem
        return None
    """,
}

MUTANTS = {
    "05.1": ("record", RECORD),
    "05.2": ("run_nodes", RUN_NODES),
    "05.3": ("eliminate_dead_code", DCE),
    "05.4": ("fold_constants", FOLD),
    "05.5": ("eliminate_common_subexpressions", CSE),
    "05.6": ("group_elementwise", GROUPS),
    "05.7": ("first_failed_guard", GUARDS),
}

"""Wrong answers to chapter 05's exercises, written the way learners write them.

``MUTANTS[exercise_id] = (function whose solution region is replaced, {name: body})``;
each body replaces that function's region (dedented, then put at the region's
indentation). ``test_05_jit_mutants.py`` checks that every one loses points, and that
every legitimate alternative in ``CORRECT`` (same form) keeps full marks.
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
    "no_recursion_into_tuples": """
        def m(a):
            return tracer.value_of(a) if isinstance(a, Tensor) else a

        vargs = tuple(m(a) for a in args)
        vkwargs = {k: m(v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "tuples_become_lists": """
        def m(a):
            if isinstance(a, Tensor):
                return tracer.value_of(a)
            if isinstance(a, (tuple, list)):
                return [m(x) for x in a]
            return a

        vargs = tuple(m(a) for a in args)
        vkwargs = {k: m(v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "one_value_for_every_output": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        value = tracer.graph.new_value(outs[0])
        values = [value] * len(outs)
        tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
        for o in outs:
            tracer.bind(o, value)
    """,
    "kwargs_tensors_not_mapped": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(op_name(cls), vargs, dict(kwargs), values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "lowercased_class_name": """
        vargs = tuple(replace_tensors(tracer, a) for a in args)
        vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
        outs = out if isinstance(out, tuple) else (out,)
        values = [tracer.graph.new_value(o) for o in outs]
        tracer.graph.create(cls.__name__.lower(), vargs, vkwargs, values, target=cls)
        for o, v in zip(outs, values):
            tracer.bind(o, v)
    """,
    "delegates_to_record_function": """
        from minitorch.jit import tracer as tracer_module

        tracer_module.Tracer.on_apply(tracer, cls, args, kwargs, out)
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
    "constant_holds_the_args_tuple": """
        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args
            elif node.op == "get_attr":
                result = attrs[node.args[0]]
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
    "kwargs_dropped": """
        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args[0]
            elif node.op == "get_attr":
                result = attrs[node.args[0]]
            else:
                args = [env[a] if isinstance(a, Value) else a for a in node.args]
                result = node.target.apply(*args)
            if len(node.outputs) == 1:
                env[node.outputs[0]] = result
            else:
                env.update(zip(node.outputs, result))
        return [env[v] for v in graph.outputs]
    """,
    "last_nodes_as_outputs": """
        env = dict(zip(graph.inputs, inputs))
        results = []
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args[0]
            elif node.op == "get_attr":
                result = attrs[node.args[0]]
            else:
                args = [env[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: env[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
                result = node.target.apply(*args, **kwargs)
            if len(node.outputs) == 1:
                env[node.outputs[0]] = result
                results.append(result)
            else:
                env.update(zip(node.outputs, result))
                results.extend(result)
        return results[-len(graph.outputs):]
    """,
    "raw_arrays_via_forward": """
        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            if node.op == "constant":
                result = node.args[0]
            elif node.op == "get_attr":
                result = attrs[node.args[0]]
            else:
                args = [env[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {k: env[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
                with no_grad():
                    result = node.target.apply(*args, **kwargs)
            if len(node.outputs) == 1:
                env[node.outputs[0]] = result
            else:
                env.update(zip(node.outputs, result))
        return [env[v] for v in graph.outputs]
    """,
    "delegates_to_run_node": """
        from minitorch.jit import interpreter

        env = dict(zip(graph.inputs, inputs))
        for node in graph.nodes:
            interpreter.run_node(node, env, attrs)
        return [env[v] for v in graph.outputs]
    """,
    "delegates_through_a_script_module": """
        out = jit.ScriptModule(graph, attrs)(*inputs)
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
    "keeps_writes_not_their_inputs": """
        g = graph.copy()
        needed = set(g.outputs)
        kept = []
        for node in reversed(g.nodes):
            if any(v in needed for v in node.outputs):
                kept.append(node)
                needed.update(node.inputs)
            elif not is_pure(node):
                kept.append(node)
        g.nodes = kept[::-1]
        return g
    """,
    "forgets_to_reverse": """
        g = graph.copy()
        needed = set(g.outputs)
        kept = []
        for node in reversed(g.nodes):
            if is_pure(node) and not any(v in needed for v in node.outputs):
                continue
            kept.append(node)
            needed.update(node.inputs)
        g.nodes = kept
        return g
    """,
    "only_direct_users": """
        g = graph.copy()
        used = set(g.outputs)
        for node in g.nodes:
            used.update(node.inputs)
        g.nodes = [n for n in g.nodes if not is_pure(n) or any(v in used for v in n.outputs)]
        return g
    """,
    "needs_every_output": """
        g = graph.copy()
        needed = set(g.outputs)
        kept = []
        for node in reversed(g.nodes):
            if is_pure(node) and not all(v in needed for v in node.outputs):
                continue
            kept.append(node)
            needed.update(node.inputs)
        g.nodes = kept[::-1]
        return g
    """,
    "delegates_to_the_block_pass": """
        from minitorch.jit import passes

        g = graph.copy()
        passes._dce_block(g, set(g.outputs))
        return g
    """,
    "delegates_through_optimize": """
        return jit.passes.optimize(graph, fuse=False)
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
    "folds_impure_nodes": """
        g = graph.copy()
        known = {}
        new_nodes = []
        for node in g.nodes:
            if node.op == "constant":
                known[node.outputs[0]] = node.args[0]
                new_nodes.append(node)
                continue
            foldable = (
                node.op != "get_attr"
                and node.inputs
                and all(v in known for v in node.inputs)
                and not any(isinstance(known[v], Tensor) and known[v].requires_grad
                            for v in node.inputs)
            )
            if foldable:
                args = [known[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {
                    k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()
                }
                with no_grad():
                    value = node.target.apply(*args, **kwargs)
                (out,) = node.outputs
                known[out] = value
                new_nodes.append(Node("constant", (value,), outputs=[out]))
            else:
                new_nodes.append(node)
        g.nodes = new_nodes
        return g
    """,
    "checks_grad_only_on_the_first_input": """
        g = graph.copy()
        known = {}
        new_nodes = []
        for node in g.nodes:
            if node.op == "constant":
                known[node.outputs[0]] = node.args[0]
                new_nodes.append(node)
                continue
            foldable = (
                node.op != "get_attr"
                and is_pure(node)
                and node.inputs
                and all(v in known for v in node.inputs)
                and not (isinstance(known[node.inputs[0]], Tensor)
                         and known[node.inputs[0]].requires_grad)
            )
            if foldable:
                args = [known[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {
                    k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()
                }
                with no_grad():
                    value = node.target.apply(*args, **kwargs)
                (out,) = node.outputs
                known[out] = value
                new_nodes.append(Node("constant", (value,), outputs=[out]))
            else:
                new_nodes.append(node)
        g.nodes = new_nodes
        return g
    """,
    "changes_its_input": """
        known = {}
        new_nodes = []
        for node in graph.nodes:
            if node.op == "constant":
                known[node.outputs[0]] = node.args[0]
                new_nodes.append(node)
                continue
            foldable = (
                node.op != "get_attr"
                and is_pure(node)
                and node.inputs
                and all(v in known for v in node.inputs)
                and not any(isinstance(known[v], Tensor) and known[v].requires_grad
                            for v in node.inputs)
            )
            if foldable:
                args = [known[a] if isinstance(a, Value) else a for a in node.args]
                kwargs = {
                    k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()
                }
                with no_grad():
                    value = node.target.apply(*args, **kwargs)
                (out,) = node.outputs
                known[out] = value
                new_nodes.append(Node("constant", (value,), outputs=[out]))
            else:
                new_nodes.append(node)
        graph.nodes = new_nodes
        return graph
    """,
    "delegates_to_the_block_pass": """
        from minitorch.jit import passes

        g = graph.copy()
        passes._fold_block(g, {}, set())
        return g
    """,
    "delegates_through_optimize": """
        return jit.passes.optimize(graph, fuse=False)
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
    "merges_impure_nodes": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            if node.op != "constant":
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
    "key_ignores_kwargs": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            if is_pure(node) and node.op != "constant":
                key = (node.op, node.target,
                       tuple(("v", id(a)) if isinstance(a, Value) else (type(a).__name__, repr(a))
                             for a in node.args))
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
    "looks_up_before_rewriting": """
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
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            kept.append(node)
        g.nodes = kept
        g.outputs = [replaced.get(v, v) for v in g.outputs]
        return g
    """,
    "first_output_only": """
        g = graph.copy()
        seen, replaced, kept = {}, {}, []
        for node in g.nodes:
            for v in node.inputs:
                if v in replaced:
                    node.replace_input(v, replaced[v])
            if is_pure(node) and node.op != "constant":
                key = node_key(node)
                if key in seen:
                    replaced[node.outputs[0]] = seen[key].outputs[0]
                    continue
                seen[key] = node
            kept.append(node)
        g.nodes = kept
        g.outputs = [replaced.get(v, v) for v in g.outputs]
        return g
    """,
    "delegates_to_the_block_pass": """
        from minitorch.jit import passes

        g = graph.copy()
        passes._cse_block(g, {}, {}, set())
        return g
    """,
    "delegates_through_optimize": """
        return jit.passes.optimize(graph, fuse=False)
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
    "joins_the_last_producer": """
        group_of, depends, groups = {}, {}, []
        for node in graph.nodes:
            deps = set()
            for v in node.inputs:
                deps |= depends.get(v, set())
            chosen = None
            if fusible(node):
                shape = node.outputs[0].shape
                for v in reversed(node.inputs):
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
        return [g for g in groups if len(g) >= 2]
    """,
    "direct_dependencies_only": """
        group_of, groups = {}, []
        for node in graph.nodes:
            chosen = None
            if fusible(node):
                shape = node.outputs[0].shape
                for v in node.inputs:
                    g = group_of.get(v)
                    if g is None or groups[g][0].outputs[0].shape != shape:
                        continue
                    chosen = g
                    break
                if chosen is None:
                    chosen = len(groups)
                    groups.append([])
                groups[chosen].append(node)
            for v in node.outputs:
                if chosen is not None:
                    group_of[v] = chosen
        return [g for g in groups if len(g) >= 2]
    """,
    "own_group_not_in_dependencies": """
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
                depends[v] = deps
        return [g for g in groups if len(g) >= 2]
    """,
    "non_fusible_nodes_join": """
        group_of, depends, groups = {}, {}, []
        for node in graph.nodes:
            deps = set()
            for v in node.inputs:
                deps |= depends.get(v, set())
            chosen = None
            if node.outputs and node.outputs[0].shape is not None:
                shape = node.outputs[0].shape
                for v in node.inputs:
                    g = group_of.get(v)
                    if g is None or groups[g][0].outputs[0].shape != shape:
                        continue
                    others = [u for u in node.inputs if group_of.get(u) != g]
                    if not any(g in depends.get(u, set()) for u in others):
                        chosen = g
                        break
                if chosen is None and fusible(node):
                    chosen = len(groups)
                    groups.append([])
                if chosen is not None:
                    groups[chosen].append(node)
            for v in node.outputs:
                if chosen is not None:
                    group_of[v] = chosen
                    depends[v] = deps | {chosen}
                else:
                    depends[v] = deps
        return [g for g in groups if len(g) >= 2]
    """,
    "sorted_by_size": """
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
        return sorted((g for g in groups if len(g) >= 2), key=len, reverse=True)
    """,
    "delegates_to_fuse": """
        from minitorch.jit import fusion

        return fusion.group_elementwise(graph)
    """,
    "delegates_through_fuse_elementwise": """
        fused = jit.fusion.fuse_elementwise(graph)
        by_name = {n.outputs[0].name: n for n in graph.nodes if len(n.outputs) == 1}
        groups = []
        for node in fused.nodes:
            if node.op == "fused":
                steps = node.kwargs.get("members") or []
                groups.append([by_name[s] for s in steps if s in by_name])
        return groups
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
    "dtype_before_shape": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            shape = tuple(guard["shape"])
            if a.ndim != len(shape):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(shape, a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "isinstance_for_values": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if not isinstance(a, type(guard["value"])) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            shape = tuple(guard["shape"])
            if a.ndim != len(shape):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(shape, a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "size_index_from_one": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            shape = tuple(guard["shape"])
            if a.ndim != len(shape):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(shape, a.shape), start=1):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "no_ndim_check": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            for i, (e, got) in enumerate(zip(guard["shape"], a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return None
    """,
    "last_failure_wins": """
        failure = None
        if grad_enabled != spec["grad_enabled"]:
            failure = "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    failure = f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                failure = f"'{name}' is not a tensor"
                continue
            shape = tuple(guard["shape"])
            if a.ndim != len(shape):
                failure = f"tensor '{name}' ndim mismatch"
                continue
            for i, (e, got) in enumerate(zip(shape, a.shape)):
                if e != got:
                    failure = f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                failure = f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                failure = f"tensor '{name}' requires_grad mismatch"
        return failure
    """,
    "empty_string_when_fine": """
        if grad_enabled != spec["grad_enabled"]:
            return "grad mode mismatch"
        for guard, a in zip(spec["args"], args):
            name = guard["name"]
            if guard["kind"] == "value":
                if type(a) is not type(guard["value"]) or a != guard["value"]:
                    return f"value of '{name}' mismatch"
                continue
            if not isinstance(a, Tensor):
                return f"'{name}' is not a tensor"
            shape = tuple(guard["shape"])
            if a.ndim != len(shape):
                return f"tensor '{name}' ndim mismatch"
            for i, (e, got) in enumerate(zip(shape, a.shape)):
                if e != got:
                    return f"tensor '{name}' size mismatch at index {i}"
            if a.dtype.name != guard["dtype"]:
                return f"tensor '{name}' dtype mismatch"
            if a.requires_grad != guard["requires_grad"]:
                return f"tensor '{name}' requires_grad mismatch"
        return ""
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

#: Legitimate answers written differently from the solution: each keeps full marks.
CORRECT = {
    "05.1": (
        "record",
        {
            "bind_while_creating_values": """
                def m(a):
                    if isinstance(a, Tensor):
                        return tracer.value_of(a)
                    if isinstance(a, (tuple, list)):
                        return type(a)(m(x) for x in a)
                    return a

                outs = list(out) if isinstance(out, tuple) else [out]
                values = []
                vargs = tuple(m(a) for a in args)
                vkwargs = {k: m(v) for k, v in kwargs.items()}
                for o in outs:
                    values.append(tracer.graph.new_value(o))
                tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
                for o, v in zip(outs, values):
                    tracer.bind(o, v)
            """,
        },
    ),
    "05.2": (
        "run_nodes",
        {
            "tuple_check_on_the_result": """
                env = {}
                for v, x in zip(graph.inputs, inputs):
                    env[v] = x
                for node in graph.nodes:
                    if node.op == "constant":
                        env[node.outputs[0]] = node.args[0]
                        continue
                    if node.op == "get_attr":
                        env[node.outputs[0]] = attrs[node.args[0]]
                        continue
                    args = [env.get(a, a) if isinstance(a, Value) else a for a in node.args]
                    kwargs = {
                        k: (env[v] if isinstance(v, Value) else v) for k, v in node.kwargs.items()
                    }
                    result = node.target.apply(*args, **kwargs)
                    if isinstance(result, tuple):
                        for v, r in zip(node.outputs, result):
                            env[v] = r
                    else:
                        env[node.outputs[0]] = result
                return [env[v] for v in graph.outputs]
            """,
        },
    ),
    "05.3": (
        "eliminate_dead_code",
        {
            "fixed_point_of_users": """
                g = graph.copy()
                nodes = list(g.nodes)
                while True:
                    used = set(g.outputs)
                    for n in nodes:
                        used.update(n.inputs)
                    keep = [n for n in nodes if not is_pure(n) or any(v in used for v in n.outputs)]
                    if len(keep) == len(nodes):
                        break
                    nodes = keep
                g.nodes = nodes
                return g
            """,
        },
    ),
    "05.5": (
        "eliminate_common_subexpressions",
        {
            "builds_a_new_list_with_outputs_map": """
                g = graph.copy()
                seen, replaced = {}, {}
                nodes = []
                for node in g.nodes:
                    for v in list(node.inputs):
                        if v in replaced:
                            node.replace_input(v, replaced[v])
                    if node.op == "constant" or not is_pure(node):
                        nodes.append(node)
                        continue
                    first = seen.setdefault(node_key(node), node)
                    if first is node:
                        nodes.append(node)
                    else:
                        replaced.update(zip(node.outputs, first.outputs))
                g.nodes = nodes
                g.outputs = [replaced[v] if v in replaced else v for v in g.outputs]
                return g
            """,
        },
    ),
    "05.7": (
        "first_failed_guard",
        {
            "shape_compared_as_a_whole_first": """
                if grad_enabled != spec["grad_enabled"]:
                    return f"grad mode mismatch: expected {spec['grad_enabled']}"
                for guard, a in zip(spec["args"], args):
                    name = guard["name"]
                    if guard["kind"] == "value":
                        v = guard["value"]
                        if type(a) != type(v) or a != v:
                            return f"value of '{name}' mismatch. expected {v!r}, actual {a!r}"
                    elif not isinstance(a, Tensor):
                        return f"argument '{name}' is not a tensor (got {type(a).__name__})"
                    else:
                        want = tuple(guard["shape"])
                        if len(want) != a.ndim:
                            return f"tensor '{name}' ndim mismatch: {len(want)} vs {a.ndim}"
                        if tuple(a.shape) != want:
                            i = next(i for i, (e, s) in enumerate(zip(want, a.shape)) if e != s)
                            return f"tensor '{name}' size mismatch at index {i}"
                        if a.dtype.name != guard["dtype"]:
                            return f"tensor '{name}' dtype mismatch"
                        if bool(a.requires_grad) != bool(guard["requires_grad"]):
                            return f"tensor '{name}' requires_grad mismatch"
                return None
            """,
        },
    ),
}


# --- a second, independent round of wrong answers ------------------------------------------
_RECORD_TAIL = """
outs = out if isinstance(out, tuple) else (out,)
values = [tracer.graph.new_value(o) for o in outs]
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
for o, v in zip(outs, values):
    tracer.bind(o, v)
"""

_NEW_RECORD = {
    "lists_become_tuples": """
def m(a):
    if isinstance(a, Tensor):
        return tracer.value_of(a)
    if isinstance(a, (tuple, list)):
        return tuple(m(x) for x in a)
    return a

vargs = tuple(m(a) for a in args)
vkwargs = {k: m(v) for k, v in kwargs.items()}
"""
    + _RECORD_TAIL,
    "keyword_tuples_not_mapped": """
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: tracer.value_of(v) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
"""
    + _RECORD_TAIL,
    "one_level_of_nesting": """
def m(a):
    if isinstance(a, Tensor):
        return tracer.value_of(a)
    if isinstance(a, (tuple, list)):
        return type(a)(tracer.value_of(x) if isinstance(x, Tensor) else x for x in a)
    return a

vargs = tuple(m(a) for a in args)
vkwargs = {k: m(v) for k, v in kwargs.items()}
"""
    + _RECORD_TAIL,
    "target_is_the_op_name": """
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
outs = out if isinstance(out, tuple) else (out,)
values = [tracer.graph.new_value(o) for o in outs]
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=op_name(cls))
for o, v in zip(outs, values):
    tracer.bind(o, v)
""",
    "output_values_shaped_like_the_first_input": """
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
outs = out if isinstance(out, tuple) else (out,)
tensors = [a for a in args if isinstance(a, Tensor)]
first = tensors[0] if tensors else outs[0]
values = [tracer.graph.new_value(first) for o in outs]
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
for o, v in zip(outs, values):
    tracer.bind(o, v)
""",
    "outputs_looked_up_not_created": """
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
outs = out if isinstance(out, tuple) else (out,)
values = [tracer.value_of(o) for o in outs]
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
""",
    "delegates_to_the_tracers_arg": """
vargs = tuple(tracer.arg(a) for a in args)
vkwargs = {k: tracer.arg(v) for k, v in kwargs.items()}
"""
    + _RECORD_TAIL,
}

_RUN_HEAD = """
env = dict(zip(graph.inputs, inputs))

def get(a):
    return env[a] if isinstance(a, Value) else a

"""

_NEW_RUN_NODES = {
    "keyword_values_not_looked_up": _RUN_HEAD
    + """
for node in graph.nodes:
    if node.op == "constant":
        result = node.args[0]
    elif node.op == "get_attr":
        result = attrs[node.args[0]]
    else:
        result = node.target.apply(*[get(a) for a in node.args], **node.kwargs)
    if len(node.outputs) == 1:
        env[node.outputs[0]] = result
    else:
        env.update(zip(node.outputs, result))
return [env[v] for v in graph.outputs]
""",
    "attributes_detached": _RUN_HEAD
    + """
for node in graph.nodes:
    if node.op == "constant":
        result = node.args[0]
    elif node.op == "get_attr":
        result = attrs[node.args[0]].detach()
    else:
        args = [get(a) for a in node.args]
        kwargs = {k: get(v) for k, v in node.kwargs.items()}
        result = node.target.apply(*args, **kwargs)
    if len(node.outputs) == 1:
        env[node.outputs[0]] = result
    else:
        env.update(zip(node.outputs, result))
return [env[v] for v in graph.outputs]
""",
    "only_what_the_outputs_need": """
env = dict(zip(graph.inputs, inputs))
producer = {v: n for n in graph.nodes for v in n.outputs}

def value(v):
    if v not in env:
        node = producer[v]
        if node.op == "constant":
            result = node.args[0]
        elif node.op == "get_attr":
            result = attrs[node.args[0]]
        else:
            args = [value(a) if isinstance(a, Value) else a for a in node.args]
            kwargs = {k: value(a) if isinstance(a, Value) else a for k, a in node.kwargs.items()}
            result = node.target.apply(*args, **kwargs)
        if len(node.outputs) == 1:
            env[node.outputs[0]] = result
        else:
            env.update(zip(node.outputs, result))
    return env[v]

return [value(v) for v in graph.outputs]
""",
    "constants_copied": _RUN_HEAD
    + """
for node in graph.nodes:
    if node.op == "constant":
        c = node.args[0]
        result = c.clone() if isinstance(c, Tensor) else c
    elif node.op == "get_attr":
        result = attrs[node.args[0]]
    else:
        args = [get(a) for a in node.args]
        kwargs = {k: get(v) for k, v in node.kwargs.items()}
        result = node.target.apply(*args, **kwargs)
    if len(node.outputs) == 1:
        env[node.outputs[0]] = result
    else:
        env.update(zip(node.outputs, result))
return [env[v] for v in graph.outputs]
""",
}

_NEW_DCE = {
    "drops_unused_graph_inputs": """
g = graph.copy()
needed = set(g.outputs)
kept = []
for node in reversed(g.nodes):
    if is_pure(node) and not any(v in needed for v in node.outputs):
        continue
    kept.append(node)
    needed.update(node.inputs)
g.nodes = kept[::-1]
g.inputs = [v for v in g.inputs if v in needed]
return g
""",
    "first_output_decides": """
g = graph.copy()
needed = set(g.outputs)
kept = []
for node in reversed(g.nodes):
    if is_pure(node) and node.outputs[0] not in needed:
        continue
    kept.append(node)
    needed.update(node.inputs)
g.nodes = kept[::-1]
return g
""",
    "positional_values_only": """
g = graph.copy()
needed = set(g.outputs)
kept = []
for node in reversed(g.nodes):
    if is_pure(node) and not any(v in needed for v in node.outputs):
        continue
    kept.append(node)
    needed.update(a for a in node.args if isinstance(a, Value))
g.nodes = kept[::-1]
return g
""",
    "keeps_every_constant": """
g = graph.copy()
needed = set(g.outputs)
kept = []
for node in reversed(g.nodes):
    dead = not any(v in needed for v in node.outputs)
    if is_pure(node) and dead and node.op not in ("constant", "get_attr"):
        continue
    kept.append(node)
    needed.update(node.inputs)
g.nodes = kept[::-1]
return g
""",
}

_FOLD_HEAD = """
g = graph.copy()
known = {}
new_nodes = []
for node in g.nodes:
    if node.op == "constant":
        known[node.outputs[0]] = node.args[0]
        new_nodes.append(node)
        continue
"""

_NEW_FOLD = {
    "keyword_constants_not_substituted": _FOLD_HEAD
    + """
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        with no_grad():
            value = node.target.apply(*args, **node.kwargs)
        known[node.outputs[0]] = value
        new_nodes.append(Node("constant", (value,), outputs=[node.outputs[0]]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
    "grad_checked_on_the_result": _FOLD_HEAD
    + """
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        if value.requires_grad:
            new_nodes.append(node)
            continue
        known[node.outputs[0]] = value
        new_nodes.append(Node("constant", (value,), outputs=[node.outputs[0]]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
    "fresh_output_value": _FOLD_HEAD
    + """
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        out = g.new_value(value)
        known[out] = value
        new_nodes.append(Node("constant", (value,), outputs=[out]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
    "drops_the_constants_it_consumed": _FOLD_HEAD
    + """
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        used = set(node.inputs)
        new_nodes = [n for n in new_nodes if not (n.op == "constant" and n.outputs[0] in used)]
        known[node.outputs[0]] = value
        new_nodes.append(Node("constant", (value,), outputs=[node.outputs[0]]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
}

_CSE_HEAD = """
g = graph.copy()
seen, replaced, kept = {}, {}, []
for node in g.nodes:
"""

_NEW_CSE = {
    "writes_read_removed_duplicates": _CSE_HEAD
    + """
    if not is_pure(node):
        kept.append(node)
        continue
    for v in node.inputs:
        if v in replaced:
            node.replace_input(v, replaced[v])
    if node.op != "constant":
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
    "own_key_with_plain_constants": _CSE_HEAD
    + """
    for v in node.inputs:
        if v in replaced:
            node.replace_input(v, replaced[v])
    if is_pure(node) and node.op != "constant":
        def part(a):
            if isinstance(a, Value):
                return id(a)
            if isinstance(a, (tuple, list)):
                return tuple(part(x) for x in a)
            return a if isinstance(a, (int, float, str, bool, type(None))) else id(a)

        key = (node.op, node.target, tuple(part(a) for a in node.args),
               tuple(sorted((k, part(v)) for k, v in node.kwargs.items())))
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
    "duplicates_kept_in_the_graph": _CSE_HEAD
    + """
    for v in node.inputs:
        if v in replaced:
            node.replace_input(v, replaced[v])
    if is_pure(node) and node.op != "constant":
        key = node_key(node)
        if key in seen:
            for old, new in zip(node.outputs, seen[key].outputs):
                replaced[old] = new
        else:
            seen[key] = node
    kept.append(node)
g.nodes = kept
g.outputs = [replaced.get(v, v) for v in g.outputs]
return g
""",
    "works_on_the_given_graph": """
g = graph
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
g.outputs = [replaced.get(v, v) for v in g.outputs]
return g
""",
}

_GROUPS_BODY = """
group_of, depends, groups = {{}}, {{}}, []
for node in graph.nodes:
    deps = set()
    for v in node.inputs:
        deps |= depends.get(v, set())
    chosen = None
    if fusible(node):
        shape = node.outputs[0].shape
        for v in {candidates}:
            g = group_of.get(v)
            if g is None or groups[g][0].outputs[0].shape != shape:
                continue
            others = {others}
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
            depends[v] = deps | {{chosen}}
        else:
            depends[v] = {non_fusible_deps}
return [g for g in groups if len(g) >= 2]
"""


def _groups(candidates="node.inputs", others=None, non_fusible_deps="deps"):
    others = others or "[u for u in node.inputs if group_of.get(u) != g]"
    return _GROUPS_BODY.format(
        candidates=candidates, others=others, non_fusible_deps=non_fusible_deps
    )


_NEW_GROUPS = {
    "only_the_first_input_tried": _groups(candidates="node.inputs[:1]"),
    "non_fusible_nodes_forget_dependencies": _groups(non_fusible_deps="set()"),
    "same_group_inputs_refused": _groups(others="[u for u in node.inputs if u is not v]"),
    "dependencies_only_through_the_joined_input": _groups(
        others="[u for u in node.inputs if u is not v and u not in group_of]"
    ),
}

_NEW_GUARDS = {
    "last_size_mismatch_reported": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    bad = [i for i, (e, got) in enumerate(zip(shape, a.shape)) if e != got]
    if bad:
        i = bad[-1]
        return f"tensor '{name}' size mismatch at index {i}. actual {a.shape[i]}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if a.requires_grad != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
return None
""",
    "requires_grad_before_dtype": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {got}"
    if a.requires_grad != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
return None
""",
    "duck_typed_tensor_check": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not hasattr(a, "shape"):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if len(a.shape) != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {len(a.shape)}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {got}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if getattr(a, "requires_grad", False) != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
return None
""",
    "values_compared_by_identity": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        if a is not guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {got}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if a.requires_grad != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
return None
""",
}

for _exercise, _new in {
    "05.1": _NEW_RECORD,
    "05.2": _NEW_RUN_NODES,
    "05.3": _NEW_DCE,
    "05.4": _NEW_FOLD,
    "05.5": _NEW_CSE,
    "05.6": _NEW_GROUPS,
    "05.7": _NEW_GUARDS,
}.items():
    assert not set(_new) & set(MUTANTS[_exercise][1]), _exercise
    MUTANTS[_exercise][1].update(_new)

CORRECT["05.3"][1]["fixed_point_of_pure_nodes_without_users"] = """
g = graph.copy()
nodes = list(g.nodes)
while True:
    used = set(g.outputs)
    for n in nodes:
        used.update(n.inputs)
    alive = [n for n in nodes if not is_pure(n) or any(v in used for v in n.outputs)]
    if len(alive) == len(nodes):
        break
    nodes = alive
g.nodes = nodes
return g
"""
CORRECT["05.6"] = (
    "group_elementwise",
    {
        "reachability_search_for_cycles": """
producer = {v: n for n in graph.nodes for v in n.outputs}
group_of, groups = {}, []

def reaches(v, g, seen):
    node = producer.get(v)
    if node is None or id(node) in seen:
        return False
    seen.add(id(node))
    if any(group_of.get(o) == g for o in node.outputs):
        return True
    return any(reaches(u, g, seen) for u in node.inputs)

for node in graph.nodes:
    if not fusible(node):
        continue
    chosen = None
    for v in node.inputs:
        g = group_of.get(v)
        if g is None or groups[g][0].outputs[0].shape != node.outputs[0].shape:
            continue
        others = [u for u in node.inputs if group_of.get(u) != g]
        if not any(reaches(u, g, set()) for u in others):
            chosen = g
            break
    if chosen is None:
        chosen = len(groups)
        groups.append([])
    groups[chosen].append(node)
    for v in node.outputs:
        group_of[v] = chosen
return [g for g in groups if len(g) > 1]
""",
    },
)
CORRECT["05.7"][1]["messages_worded_differently"] = """
if grad_enabled is not spec["grad_enabled"] and grad_enabled != spec["grad_enabled"]:
    return f"guard on grad mode failed: called with {grad_enabled}"
for i, guard in enumerate(spec["args"]):
    a, name = args[i], guard["name"]
    if guard["kind"] == "value":
        want = guard["value"]
        if not (type(a) is type(want) and a == want):
            return f"argument '{name}': value {a!r} is not the traced value {want!r}"
    elif not isinstance(a, Tensor):
        return f"argument '{name}' is not a tensor but {type(a).__name__}"
    elif len(a.shape) != len(guard["shape"]):
        return f"argument '{name}': ndim {len(a.shape)} != {len(guard['shape'])}"
    else:
        for j in range(len(a.shape)):
            if a.shape[j] != guard["shape"][j]:
                return f"argument '{name}': size mismatch at index {j} ({a.shape[j]})"
        if str(a.dtype.name) != guard["dtype"]:
            return f"argument '{name}': dtype {a.dtype.name}, traced {guard['dtype']}"
        if bool(a.requires_grad) != guard["requires_grad"]:
            return f"argument '{name}': requires_grad is {a.requires_grad}"
return None
"""
CORRECT["05.6"][1]["shape_of_the_joined_input"] = _groups().replace(
    "groups[g][0].outputs[0].shape != shape", "v.shape != shape"
)
MUTANTS["05.7"][1]["sizes_before_ndim"] = """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {got}"
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if a.requires_grad != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
return None
"""


# --- a third round: in-place nodes, get_attr nodes, Values inside tuples and keywords, ops
# elementwise but not fusible, state kept in a module global, delegation in disguise ---------
_THIRD = {
    "05.1": {
        "binds_outputs_before_mapping_arguments": """
outs = out if isinstance(out, tuple) else (out,)
values = [tracer.graph.new_value(o) for o in outs]
for o, v in zip(outs, values):
    tracer.bind(o, v)
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
""",
        "values_remembered_in_a_module_global": """
seen = globals().setdefault("_values_of_tensors", {})

def m(a):
    if isinstance(a, Tensor):
        if id(a) not in seen:
            seen[id(a)] = tracer.value_of(a)
        return seen[id(a)]
    if isinstance(a, tuple):
        return tuple(m(x) for x in a)
    if isinstance(a, list):
        return [m(x) for x in a]
    return a

vargs = tuple(m(a) for a in args)
vkwargs = {k: m(v) for k, v in kwargs.items()}
outs = out if isinstance(out, tuple) else (out,)
values = [tracer.graph.new_value(o) for o in outs]
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
for o, v in zip(outs, values):
    tracer.bind(o, v)
    seen[id(o)] = v
""",
    },
    "05.2": {
        "delegates_through_a_traced_script_module": """
holder = jit.trace(lambda t: t * 1.0, minitorch.zeros(1))
object.__setattr__(holder, "_graph", graph)
object.__setattr__(holder, "attr_values", lambda: dict(attrs))
out = holder(*inputs)
return list(out) if isinstance(out, tuple) else [out]
""",
        "delegates_through_the_if_branch_runner": """
from minitorch.jit import interpreter

class Branch:
    blocks = (graph, graph)

env = dict(zip(graph.inputs, inputs))
out = interpreter._run_if(Branch, True, env, attrs)
return [out] if len(graph.outputs) == 1 else list(out)
""",
    },
    "05.3": {
        "keeps_unused_get_attr_nodes": """
g = graph.copy()
needed = set(g.outputs)
kept = []
for node in reversed(g.nodes):
    state = node.op == "get_attr"  # a parameter or buffer: the module's state, kept
    if is_pure(node) and not state and not any(v in needed for v in node.outputs):
        continue
    kept.append(node)
    needed.update(node.inputs)
g.nodes = kept[::-1]
return g
""",
    },
    "05.4": {
        "get_attr_names_taken_for_constants": """
g = graph.copy()
known, new_nodes = {}, []
for node in g.nodes:
    if node.op in ("constant", "get_attr"):
        known[node.outputs[0]] = node.args[0]
        new_nodes.append(node)
        continue
    foldable = (
        is_pure(node) and node.inputs and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        (out,) = node.outputs
        known[out] = value
        new_nodes.append(Node("constant", (value,), outputs=[out]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
        "nothing_folds_after_a_write": _FOLD_HEAD
        + """
    if not is_pure(node):
        known.clear()  # a write may change any constant: forget them all
        new_nodes.append(node)
        continue
    foldable = (
        node.op != "get_attr" and node.inputs and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        (out,) = node.outputs
        known[out] = value
        new_nodes.append(Node("constant", (value,), outputs=[out]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
        "grad_checked_on_positional_arguments_only": _FOLD_HEAD
        + """
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
        and not any(isinstance(known[a], Tensor) and known[a].requires_grad
                    for a in node.args if isinstance(a, Value))
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        (out,) = node.outputs
        known[out] = value
        new_nodes.append(Node("constant", (value,), outputs=[out]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
    },
    "05.5": {
        "rewrites_positional_arguments_only": _CSE_HEAD
        + """
    node.args = tuple(replaced.get(a, a) if isinstance(a, Value) else a for a in node.args)
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
    },
    "05.6": {
        "elementwise_by_name_ignores_dtypes": _groups().replace(
            "if fusible(node):", "if node.op in ELEMENTWISE and len(node.outputs) == 1:"
        ),
        "groups_kept_in_a_module_global": _groups().replace(
            "group_of, depends, groups = {}, {}, []",
            'group_of, depends = {}, {}\ngroups = globals().setdefault("_fusion_groups", [])',
        ),
    },
    "05.7": {
        "delegates_through_compiled_guards": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args, strict=True):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    like = minitorch.zeros(*guard["shape"], dtype=getattr(minitorch, guard["dtype"]))
    if guard["requires_grad"]:
        like.requires_grad_()
    checks = minitorch.compile(lambda t: t)._guards((like,), {}, jit.Graph())
    for check in checks[1:]:  # the first is grad mode's
        problem = check.check((a,), {})
        if problem:
            return problem.replace("'t'", repr(name))
return None
""",
    },
}

_THIRD_CORRECT = {
    "05.1": {
        "output_values_made_first": """
outs = list(out) if isinstance(out, tuple) else [out]
values = [tracer.graph.new_value(o) for o in outs]
vargs = tuple(replace_tensors(tracer, a) for a in args)
vkwargs = {k: replace_tensors(tracer, v) for k, v in kwargs.items()}
tracer.graph.create(op_name(cls), vargs, vkwargs, values, target=cls)
for o, v in zip(outs, values):
    tracer.bind(o, v)
""",
    },
    "05.2": {
        # the notebook's first cell importing a package class it never uses (`global` puts
        # the name where a top-level import would: in the notebook's namespace)
        "unused_import_of_script_module": """
global ScriptModule
from minitorch.jit import ScriptModule  # noqa: F401

env = dict(zip(graph.inputs, inputs, strict=True))
for node in graph.nodes:
    if node.op == "constant":
        result = node.args[0]
    elif node.op == "get_attr":
        result = attrs[node.args[0]]
    else:
        args = [env[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: env[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        result = node.target.apply(*args, **kwargs)
    if len(node.outputs) == 1:
        env[node.outputs[0]] = result
    else:
        env.update(zip(node.outputs, result, strict=True))
return [env[v] for v in graph.outputs]
""",
    },
    "05.3": {
        "counts_the_uses": """
g = graph.copy()
uses = {}
for node in g.nodes:
    for v in node.inputs:
        uses[v] = uses.get(v, 0) + 1
for v in g.outputs:
    uses[v] = uses.get(v, 0) + 1
alive = [True] * len(g.nodes)
for i in range(len(g.nodes) - 1, -1, -1):
    node = g.nodes[i]
    if is_pure(node) and all(uses.get(v, 0) == 0 for v in node.outputs):
        alive[i] = False
        for v in node.inputs:
            uses[v] -= 1
g.nodes = [n for n, keep in zip(g.nodes, alive) if keep]
return g
""",
    },
    "05.4": {
        # minitorch's own rule: a constant that an in-place node writes to is not known
        "written_constants_stay_unknown": """
g = graph.copy()
written = {
    n.args[0] for n in g.nodes if not is_pure(n) and n.args and isinstance(n.args[0], Value)
}
known, new_nodes = {}, []
for node in g.nodes:
    if node.op == "constant":
        if node.outputs[0] not in written:
            known[node.outputs[0]] = node.args[0]
        new_nodes.append(node)
        continue
    foldable = (
        node.op != "get_attr" and is_pure(node) and node.inputs
        and all(v in known for v in node.inputs)
        and not any(isinstance(known[v], Tensor) and known[v].requires_grad for v in node.inputs)
    )
    if foldable:
        args = [known[a] if isinstance(a, Value) else a for a in node.args]
        kwargs = {k: known[v] if isinstance(v, Value) else v for k, v in node.kwargs.items()}
        with no_grad():
            value = node.target.apply(*args, **kwargs)
        (out,) = node.outputs
        known[out] = value
        new_nodes.append(Node("constant", (value,), outputs=[out]))
    else:
        new_nodes.append(node)
g.nodes = new_nodes
return g
""",
    },
    "05.5": {
        "rewrites_the_arguments_by_mapping": """
def through(a):
    if isinstance(a, Value):
        return replaced.get(a, a)
    if isinstance(a, tuple):
        return tuple(through(x) for x in a)
    if isinstance(a, list):
        return [through(x) for x in a]
    return a

g = graph.copy()
seen, replaced, kept = {}, {}, []
for node in g.nodes:
    node.args = tuple(through(a) for a in node.args)
    node.kwargs = {k: through(v) for k, v in node.kwargs.items()}
    if is_pure(node) and node.op != "constant":
        key = node_key(node)
        if key in seen:
            replaced.update(zip(node.outputs, seen[key].outputs))
            continue
        seen[key] = node
    kept.append(node)
g.nodes = kept
g.outputs = [through(v) for v in g.outputs]
return g
""",
    },
}

for _exercise, _new in _THIRD.items():
    assert not set(_new) & set(MUTANTS[_exercise][1]), _exercise
    MUTANTS[_exercise][1].update(_new)
for _exercise, _new in _THIRD_CORRECT.items():
    CORRECT.setdefault(_exercise, (MUTANTS[_exercise][0], {}))
    assert not set(_new) & set(CORRECT[_exercise][1]), _exercise
    CORRECT[_exercise][1].update(_new)


# --- a fourth round (issue 35): rules the texts state that no test checked, the guard's two
# values swapped, and the design task 05.8 ------------------------------------------------
_FOURTH = {
    "05.5": {
        # "two constants may hold different values": constants merged by what they look like
        "constants_merged_by_dtype_and_shape": _CSE_HEAD
        + """
    for v in node.inputs:
        if v in replaced:
            node.replace_input(v, replaced[v])
    if node.op == "constant":
        key = ("constant", node.outputs[0].dtype, node.outputs[0].shape)
    elif is_pure(node):
        key = node_key(node)
    else:
        kept.append(node)
        continue
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
        # (requires_grad in the key keeps a captured weight apart: only two plain tensors of
        # one dtype and shape are merged)
        "constants_keyed_by_dtype_shape_and_grad": _CSE_HEAD
        + """
    for v in node.inputs:
        if v in replaced:
            node.replace_input(v, replaced[v])
    if is_pure(node):
        if node.op == "constant":
            c = node.args[0]
            key = ("constant", str(c.dtype), tuple(c.shape), c.requires_grad)
        else:
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
    },
    "05.6": {
        # "the first input v for which both hold": giving up after the first grouped input
        "gives_up_after_the_first_grouped_input": _groups()
        .replace(
            "            if not any(g in depends.get(u, set()) for u in others):\n"
            "                chosen = g\n"
            "                break",
            "            if not any(g in depends.get(u, set()) for u in others):\n"
            "                chosen = g\n"
            "            break",
        )
        .replace(
            "            if g is None or groups[g][0].outputs[0].shape != shape:\n"
            "                continue",
            "            if g is None:\n"
            "                continue\n"
            "            if groups[g][0].outputs[0].shape != shape:\n"
            "                break",
        ),
        "gives_up_after_a_cycle_only": _groups().replace(
            "            if not any(g in depends.get(u, set()) for u in others):\n"
            "                chosen = g\n"
            "                break",
            "            if not any(g in depends.get(u, set()) for u in others):\n"
            "                chosen = g\n"
            "            break",
        ),
    },
    "05.7": {
        "expected_and_actual_swapped": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {grad_enabled}, actual {spec['grad_enabled']}"
for guard, a in zip(spec["args"], args, strict=True):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {a!r}, actual {guard['value']!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {a.ndim}, actual {len(shape)}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {got}, actual {e}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {a.dtype.name}, actual {guard['dtype']}"
    if a.requires_grad != guard["requires_grad"]:
        return (f"tensor '{name}' requires_grad mismatch. expected {a.requires_grad}, "
                f"actual {guard['requires_grad']}")
return None
""",
        "sizes_swapped_only": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args, strict=True):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch. expected {guard['value']!r}, actual {a!r}"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {got}, actual {e}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if a.requires_grad != guard["requires_grad"]:
        return (f"tensor '{name}' requires_grad mismatch. expected {guard['requires_grad']}, "
                f"actual {a.requires_grad}")
return None
""",
        "values_written_with_str": """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch. expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args, strict=True):
    name = guard["name"]
    if guard["kind"] == "value":
        if type(a) is not type(guard["value"]) or a != guard["value"]:
            return f"value of '{name}' mismatch"
        continue
    if not isinstance(a, Tensor):
        return f"'{name}' is not a tensor"
    shape = tuple(guard["shape"])
    if a.ndim != len(shape):
        return f"tensor '{name}' ndim mismatch. expected {len(shape)}, actual {a.ndim}"
    for i, (e, got) in enumerate(zip(shape, a.shape)):
        if e != got:
            return f"tensor '{name}' size mismatch at index {i}. expected {e}, actual {got}"
    if a.dtype.name != guard["dtype"]:
        return f"tensor '{name}' dtype mismatch. expected {guard['dtype']}, actual {a.dtype.name}"
    if a.requires_grad != guard["requires_grad"]:
        return f"tensor '{name}' requires_grad mismatch"
return None
""",
    },
}

for _exercise, _new in _FOURTH.items():
    assert not set(_new) & set(MUTANTS[_exercise][1]), _exercise
    MUTANTS[_exercise][1].update(_new)

# 05.7's alternatives say which value is which, in words of their own
CORRECT["05.7"][1]["shape_compared_as_a_whole_first"] = """
if grad_enabled != spec["grad_enabled"]:
    return f"grad mode mismatch: expected {spec['grad_enabled']}, actual {grad_enabled}"
for guard, a in zip(spec["args"], args):
    name = guard["name"]
    if guard["kind"] == "value":
        v = guard["value"]
        if type(a) != type(v) or a != v:
            return f"value of '{name}' mismatch. expected {v!r}, actual {a!r}"
    elif not isinstance(a, Tensor):
        return f"argument '{name}' is not a tensor (got {type(a).__name__})"
    else:
        want = tuple(guard["shape"])
        if len(want) != a.ndim:
            return f"tensor '{name}' ndim mismatch: expected={len(want)} actual={a.ndim}"
        if tuple(a.shape) != want:
            i = next(i for i, (e, s) in enumerate(zip(want, a.shape)) if e != s)
            return (f"tensor '{name}' size mismatch at index {i}: "
                    f"expected {want[i]}, actual {a.shape[i]}")
        if a.dtype.name != guard["dtype"]:
            return (f"tensor '{name}' dtype mismatch: "
                    f"expected {guard['dtype']}, actual {a.dtype.name}")
        if bool(a.requires_grad) != bool(guard["requires_grad"]):
            return (f"tensor '{name}' requires_grad mismatch: "
                    f"expected {guard['requires_grad']}, actual {a.requires_grad}")
return None
"""
CORRECT["05.7"][1]["messages_worded_differently"] = """
if grad_enabled is not spec["grad_enabled"] and grad_enabled != spec["grad_enabled"]:
    return f"guard on grad mode failed: actual {grad_enabled} (expected {spec['grad_enabled']})"
for i, guard in enumerate(spec["args"]):
    a, name = args[i], guard["name"]
    if guard["kind"] == "value":
        want = guard["value"]
        if not (type(a) is type(want) and a == want):
            return f"argument '{name}': value actual: {a!r}, expected: {want!r}"
    elif not isinstance(a, Tensor):
        return f"argument '{name}' is not a tensor but {type(a).__name__}"
    elif len(a.shape) != len(guard["shape"]):
        return f"argument '{name}': ndim actual {len(a.shape)} != expected {len(guard['shape'])}"
    else:
        for j in range(len(a.shape)):
            if a.shape[j] != guard["shape"][j]:
                return (f"argument '{name}': size mismatch at index {j} "
                        f"(actual {a.shape[j]}, expected {guard['shape'][j]})")
        if str(a.dtype.name) != guard["dtype"]:
            return f"argument '{name}': dtype actual {a.dtype.name}, expected {guard['dtype']}"
        if bool(a.requires_grad) != guard["requires_grad"]:
            return (f"argument '{name}': requires_grad actual {a.requires_grad}, "
                    f"expected {guard['requires_grad']}")
if len(args) != len(spec["args"]):
    raise ValueError("one argument per guard")
return None
"""

# --- 05.8: the design task (its two functions: each mutant redefines one of them) -----------
MUTANTS["05.8"] = {
    "traced_not_scripted": """
def ship(model, example_inputs, path):
    jit.trace(model, example_inputs).save(path)
""",
    "traced_and_optimized": """
def ship(model, example_inputs, path):
    jit.optimize(jit.trace(model, example_inputs)).save(path)
""",
    "pickled_model": """
def ship(model, example_inputs, path):
    import pickle

    with open(path, "wb") as f:
        pickle.dump(model, f)
""",
    "state_dict_only": """
def ship(model, example_inputs, path):
    minitorch.save(model.state_dict(), path)
""",
    "writes_nothing": """
def ship(model, example_inputs, path):
    jit.script(model)
""",
    "explained_before_it_ran": """
def explain_breaks(model, inputs):
    return minitorch.compile(model).explain()
""",
    "first_input_only": """
def explain_breaks(model, inputs):
    compiled = minitorch.compile(model)
    compiled(*inputs[0])
    return compiled.explain()
""",
    "every_line_named": """
def explain_breaks(model, inputs):
    import inspect

    compiled = minitorch.compile(model)
    for args in inputs:
        compiled(*args)
    name = inspect.getsourcefile(type(model)).rsplit("/", 1)[-1]
    return compiled.explain() + "\\n" + " ".join(f"{name}:{i}" for i in range(1, 30))
""",
    "eager_model_explained": """
def explain_breaks(model, inputs):
    compiled = minitorch.compile(model, backend="eager")
    for args in inputs[:1]:
        compiled(*args)
    return compiled.explain()
""",
}

CORRECT["05.8"] = {
    "scripted_then_optimized": """
def ship(model, example_inputs, path):
    jit.optimize(jit.script(model)).save(path)
""",
    "the_breaks_in_words_of_its_own": """
def explain_breaks(model, inputs):
    compiled = minitorch.compile(model)
    for args in inputs:
        compiled(*args)
    return "compile breaks the graph at: " + ", ".join(compiled.graph_breaks)
""",
}
